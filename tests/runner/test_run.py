from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.data import Judgment, read_jsonl
from attune_judge.errors import UserError
from attune_judge.runner import (
    EXIT_FAILURE_BUDGET,
    FailureBudget,
    RetryPolicy,
    RunResult,
    Task,
    plan_tasks,
    run_tasks,
)
from attune_judge.runs import summary_json
from tests.runner._fakes import FakeJudge, make_items


def _run(out: Path, tasks: list[Task], **kw: object) -> RunResult:
    kw.setdefault("budget", FailureBudget(max_failure_rate=1.0))
    kw.setdefault("retry", RetryPolicy(max_retries=2, base_delay_s=0.0))
    kw.setdefault("arguments", {"k": "v"})
    return run_tasks(
        out,
        tasks,
        command="test",
        inputs={"data": "sha256:x"},
        data_fingerprint="sha256:x",
        max_concurrency=4,
        B=500,
        fsync_interval_s=None,
        **kw,  # type: ignore[arg-type]
    )


def _lines(out: Path) -> list[Judgment]:
    return read_jsonl(out / "judgments.jsonl", Judgment)


def test_summary_counts_and_means_match_hand_computation(tmp_path: Path) -> None:
    items = make_items(3, 2)  # models a, b; conversations c0..c2; turns 1, 2
    judge = FakeJudge(
        score=lambda it: 0.5 if it.candidate_model == "a" else (0.2 if it.turn == 1 else 0.4),
        outcome=lambda it, k: "parse_error" if it.item_id == "c0:1:b" else "ok",
    )
    res = _run(tmp_path / "run", plan_tasks(items, [judge]))
    models = summary_json(res.summary)["judges"]["fake-judge"]["models"]
    # a: six items all 0.5 -> mean 0.5; every resample gives 0.5 -> interval [0.5, 0.5]
    assert models["a"]["score"]["mean"] == pytest.approx(0.5)
    assert models["a"]["score"]["lower"] == pytest.approx(0.5)
    assert models["a"]["n_ok"] == 6
    # b: c0:1 failed to parse, ok values 0.4 (c0:2), 0.2, 0.4 (c1), 0.2, 0.4 (c2) -> 1.6/5 = 0.32
    assert models["b"]["n_ok"] == 5
    assert models["b"]["n_by_status"] == {
        "ok": 5,
        "parse_error": 1,
        "lm_error": 0,
        "refused": 0,
        "missing": 0,
    }
    assert models["b"]["score"]["mean"] == pytest.approx(0.32)
    assert models["b"]["score"]["n"] == 5
    assert models["b"]["score"]["n_conversations"] == 3
    # raw criterion: 1 + 6 * 0.32 = 2.92
    assert models["b"]["criteria_means"]["overall_score"] == pytest.approx(2.92)
    lo, hi = models["b"]["score"]["lower"], models["b"]["score"]["upper"]
    assert lo <= 0.32 <= hi
    assert summary_json(res.summary)["run"]["complete"] is True
    for name in ("manifest.json", "judgments.jsonl", "summary.json"):
        assert (tmp_path / "run" / name).is_file()
    # the runner writes records only: the report is the report package's (write_report)
    assert not (tmp_path / "run" / "report.md").exists()


def test_second_invocation_makes_no_judge_call(tmp_path: Path) -> None:
    items = make_items(4, 3)
    first = _run(tmp_path / "run", plan_tasks(items, [FakeJudge()]))
    assert first.n_run == 24
    again = FakeJudge()
    second = _run(tmp_path / "run", plan_tasks(items, [again]))
    assert again.n_calls == 0
    assert (second.n_skipped, second.n_run) == (24, 0)
    assert len(_lines(tmp_path / "run")) == 24
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["invocations"] == 2
    run = summary_json(second.summary)["run"]
    assert run["invocations"] == 2
    assert run["wall_time_total_s"] == pytest.approx(
        summary_json(first.summary)["run"]["wall_time_s"] + run["wall_time_s"]
    )


def test_lm_errors_are_retried_on_resume_and_the_last_record_counts(tmp_path: Path) -> None:
    items = make_items(2, 2)  # 8 items
    bad = {"c0:1:a", "c1:2:b"}
    first_judge = FakeJudge(outcome=lambda it, k: "lm_error" if it.item_id in bad else "ok")
    first = _run(tmp_path / "run", plan_tasks(items, [first_judge]))
    assert first.n_by_status == {"ok": 6, "lm_error": 2}
    assert summary_json(first.summary)["run"]["complete"] is True
    second_judge = FakeJudge()
    second = _run(tmp_path / "run", plan_tasks(items, [second_judge]))
    assert set(second_judge.calls) == bad
    assert summary_json(second.summary)["run"]["n_by_status"]["ok"] == 8
    assert summary_json(second.summary)["run"]["n_by_status"]["lm_error"] == 0
    assert len(_lines(tmp_path / "run")) == 10  # the log keeps both attempts


def test_failure_budget_stops_cleanly_and_keeps_completed_work(tmp_path: Path) -> None:
    items = make_items(20, 3)  # 120 tasks
    judge = FakeJudge(outcome=lambda it, k: "lm_error")
    res = _run(
        tmp_path / "run",
        plan_tasks(items, [judge]),
        budget=FailureBudget(max_failure_rate=0.5, min_attempts=10),
    )
    assert res.stopped is not None and "max-failure-rate" in res.stopped
    assert res.exit_code == EXIT_FAILURE_BUDGET
    # stops at the 10th failure; at most 4 (max_concurrency) more were in flight
    assert 10 <= res.n_run <= 14
    assert len(_lines(tmp_path / "run")) == res.n_run
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["run"]["n_by_status"]["lm_error"] == res.n_run
    assert summary["run"]["n_by_status"]["missing"] == 120 - res.n_run
    assert summary["run"]["complete"] is False
    fixed = FakeJudge()
    done = _run(tmp_path / "run", plan_tasks(items, [fixed]))
    assert fixed.n_calls == 120  # the failed ones again, plus all that never ran
    assert summary_json(done.summary)["run"]["complete"] and done.stopped is None


def test_failures_below_the_budget_are_recorded_and_reported(tmp_path: Path) -> None:
    items = make_items(10, 4)  # 80
    judge = FakeJudge(outcome=lambda it, k: "parse_error" if it.turn == 1 else "ok")
    # every 4th task fails (25%); with at most 4 tasks out of order, the share among the first
    # n >= 20 finished is at most 6/20 = 0.3, below the 0.35 budget
    res = _run(tmp_path / "run", plan_tasks(items, [judge]), budget=FailureBudget(0.35, 20))
    assert res.stopped is None
    assert res.n_by_status == {"ok": 60, "parse_error": 20}


def test_refusals_spend_the_failure_budget(tmp_path: Path) -> None:
    # a refused item gives no score: it counts against the budget like any other failure
    items = make_items(10, 3)  # 60
    judge = FakeJudge(outcome=lambda it, k: "refused" if it.turn == 1 else "ok")
    res = _run(tmp_path / "stop", plan_tasks(items, [judge]), budget=FailureBudget(0.1, 5))
    assert res.stopped is not None and "refused" in res.stopped and res.exit_code == 3
    res = _run(tmp_path / "run", plan_tasks(items, [judge]), budget=FailureBudget(0.5, 20))
    assert res.stopped is None  # a third refused is within a 50% budget
    assert res.n_by_status == {"refused": 20, "ok": 40}
    models = summary_json(res.summary)["judges"]["fake-judge"]["models"]
    assert models["a"]["n_by_status"]["refused"] == 10


def test_the_budget_applies_to_a_run_smaller_than_min_attempts(tmp_path: Path) -> None:
    items = make_items(2, 2, ("a",))  # 4 judgments, fewer than min_attempts=20
    judge = FakeJudge(outcome=lambda it, k: "parse_error" if it.turn == 1 else "ok")
    res = _run(tmp_path / "run", plan_tasks(items, [judge]), budget=FailureBudget(0.25, 20))
    assert res.n_run == 4 and res.stopped is not None and res.exit_code == 3  # 2 of 4 > 25%
    assert "2 of 4" in res.stopped
    res = _run(tmp_path / "ok", plan_tasks(items, [judge]), budget=FailureBudget(0.5, 20))
    assert res.stopped is None and res.exit_code == 0  # 2 of 4 is within 50%


def test_a_run_without_any_ok_judgment_is_incomplete_and_exits_3(tmp_path: Path) -> None:
    items = make_items(5, 4)  # 40
    judge = FakeJudge(outcome=lambda it, k: "parse_error")
    res = _run(tmp_path / "run", plan_tasks(items, [judge]), budget=FailureBudget(1.0, 20))
    assert res.n_run == 40 and res.exit_code == 3
    assert res.stopped is not None and res.stopped.startswith("no judgment is ok")
    assert summary_json(res.summary)["run"]["complete"] is False
    assert summary_json(res.summary)["run"]["n_by_status"]["missing"] == 0


def test_a_different_judge_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    items = make_items(2, 2)
    _run(tmp_path / "run", plan_tasks(items, [FakeJudge(judge_id="rubric-v1")]))
    with pytest.raises(UserError, match="refusing to mix") as err:
        _run(tmp_path / "run", plan_tasks(items, [FakeJudge(judge_id="rubric-v2")]))
    assert "judge_ids" in str(err.value)


def test_several_judges_in_one_run_get_separate_summaries(tmp_path: Path) -> None:
    items = make_items(2, 2)
    j1 = FakeJudge(score=lambda it: 0.25, judge_id="j1")
    j2 = FakeJudge(score=lambda it: 0.75, judge_id="j2")
    res = _run(tmp_path / "run", plan_tasks(items, [j1, j2]))
    judges = summary_json(res.summary)["judges"]
    assert judges["j1"]["models"]["a"]["score"]["mean"] == pytest.approx(0.25)
    assert judges["j2"]["models"]["a"]["score"]["mean"] == pytest.approx(0.75)
    assert judges["j1"]["models"]["a"]["n_planned"] == 4


def test_torn_last_line_is_cut_logged_and_nothing_else_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    items = make_items(3, 2)  # 12
    out = tmp_path / "run"
    _run(out, plan_tasks(items[:6], [FakeJudge()]))
    # simulate a crash mid-write: half of the next judgment's line, no newline
    partial = Judgment(item_id=items[6].item_id, judge_id="fake-judge").model_dump_json()
    with (out / "judgments.jsonl").open("a") as fh:
        fh.write(partial[: len(partial) // 2])
    judge = FakeJudge()
    with caplog.at_level("WARNING"):
        # same plan (6 items), so the manifest identity matches; then the rest
        res = _run(out, plan_tasks(items[:6], [judge]))
    assert res.torn_line_dropped is True
    assert "torn" in caplog.text
    assert judge.n_calls == 0
    assert (out / "judgments.jsonl.torn").read_text().strip() == partial[: len(partial) // 2]
    lines = _lines(out)  # strict read: every line parses
    assert sorted(j.item_id for j in lines) == sorted(it.item_id for it in items[:6])


def test_no_secret_from_the_environment_reaches_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-abcdef123456"
    monkeypatch.setenv("OPENAI_API_KEY", secret)

    class LeakyJudge(FakeJudge):
        def judge(self, item):  # type: ignore[no-untyped-def]
            j = super().judge(item)
            j.error = f"Incorrect API key provided: {secret}"
            j.details["headers"] = {"Authorization": f"Bearer {secret}"}
            return j

    items = make_items(2, 2)
    _run(tmp_path / "run", plan_tasks(items, [LeakyJudge()]), arguments={"key": secret})
    for f in (tmp_path / "run").iterdir():
        assert secret not in f.read_text(), f
    assert "***" in (tmp_path / "run" / "judgments.jsonl").read_text()
