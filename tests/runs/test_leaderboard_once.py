"""Statistics computed once: the runner stores each judge's leaderboard with rank sets in
``summary.json``; ``rank RUN`` (``runner.run_leaderboard``) and the report read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attune_judge.calibration import judgments_to_scores, leaderboard
from attune_judge.cli import app
from attune_judge.data import Judgment, read_jsonl
from attune_judge.errors import UserError
from attune_judge.report import write_report
from attune_judge.runner import FailureBudget, RetryPolicy, plan_tasks, run_leaderboard, run_tasks
from tests.runner._fakes import FakeJudge, make_items

B = 200


@pytest.fixture
def run(tmp_path: Path) -> Path:
    items = make_items(6, 2, models=("a", "b", "c"))
    shift = {"a": 0.6, "b": 0.5, "c": 0.2}
    judge = FakeJudge(score=lambda it: shift[it.candidate_model] + 0.05 * (it.turn % 2))
    out = tmp_path / "run"
    run_tasks(
        out,
        plan_tasks(items, [judge]),
        command="test",
        arguments={},
        inputs={"data": "sha256:x"},
        data_fingerprint="sha256:x",
        budget=FailureBudget(max_failure_rate=1.0),
        retry=RetryPolicy(max_retries=0, base_delay_s=0.0),
        B=B,
        fsync_interval_s=None,
        seed=3,
    )
    return out


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text("utf-8"))


def test_the_summary_stores_the_leaderboard_of_the_judgments(run: Path) -> None:
    stored = _summary(run)["judges"]["fake-judge"]["leaderboard"]
    # the same statistic computed independently from the log
    js = read_jsonl(run / "judgments.jsonl", Judgment)
    # normalised scores: bounded on [0, 1], as the runner's summary treats them
    fresh = leaderboard(*judgments_to_scores(js), B=B, seed=3, level=0.95, bounds=(0.0, 1.0))
    assert stored == fresh.model_dump(mode="json")
    assert [r["model"] for r in stored["rows"]] == ["a", "b", "c"]


def test_rank_reads_the_stored_leaderboard_and_recomputes_for_other_settings(run: Path) -> None:
    summary = _summary(run)
    summary["judges"]["fake-judge"]["leaderboard"]["note"] = "STORED"
    (run / "summary.json").write_text(json.dumps(summary))
    assert run_leaderboard(run, B=B, seed=3).note == "STORED"
    other = run_leaderboard(run, B=B + 1, seed=3)
    assert other.note != "STORED" and other.B == B + 1
    res = CliRunner().invoke(app, ["rank", str(run), "--B", str(B), "--seed", "3", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["note"] == "STORED"
    with pytest.raises(UserError, match="no judge 'nope'"):
        run_leaderboard(run, "nope", B=B, seed=3)


def test_the_report_draws_the_stored_leaderboard(run: Path) -> None:
    md = write_report(run)[0].read_text("utf-8")
    assert "computed by the report" not in md
    # a first; 6 conversations: no rank of its own (the one rule for claims)
    assert "| — | a |" in md.replace("**", "")


def test_one_model_has_its_interval_but_no_leaderboard(tmp_path: Path) -> None:
    out = tmp_path / "one"
    run_tasks(
        out,
        plan_tasks(make_items(6, 2, models=("a",)), [FakeJudge(score=lambda it: 0.1 * it.turn)]),
        command="test",
        arguments={},
        inputs={"data": "sha256:x"},
        data_fingerprint="sha256:x",
        budget=FailureBudget(max_failure_rate=1.0),
        retry=RetryPolicy(max_retries=0, base_delay_s=0.0),
        B=B,
        fsync_interval_s=None,
    )
    block = _summary(out)["judges"]["fake-judge"]
    assert "leaderboard" not in block
    score = block["models"]["a"]["score"]
    # turns 1 and 2 score 0.1 and 0.2 in every conversation: mean 0.15, no spread between them
    assert score["mean"] == pytest.approx(0.15) and score["n_conversations"] == 6
    assert score["lower"] == pytest.approx(0.15) and score["upper"] == pytest.approx(0.15)
    with pytest.raises(UserError, match="two or more models"):
        run_leaderboard(out, B=B + 1)
