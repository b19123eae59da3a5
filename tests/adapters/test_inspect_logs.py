"""Inspect AI logs in and out (issue 48), on real logs made here by ``inspect_ai.eval`` with
Inspect's offline mock model (see ``_inspect_logs``): samples judged by an attune-judge judge,
an Inspect scorer calibrated against people and ranked, a run exported as an Inspect log and
read back by Inspect's own reader; one-line errors; the missing extra named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, Rating, read_judgments, write_jsonl
from attune_judge.data.adapters import inspect_judge_items, inspect_judgments, is_inspect_log
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.adapters._inspect_logs import (
    MATCH,
    STARS,
    SYSTEM,
    TEXTS,
    WARMTH,
    Logs,
    make_logs,
    reply,
)
from tests.conftest import SAMPLES

pytest.importorskip("inspect_ai")
pytestmark = [pytest.mark.xdist_group("inspect-logs"), pytest.mark.timeout(300)]
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

HUMANS = {  # three raters, 0/1; their majority: 1 1 0 0 1 1
    "h1": {"s1": 1, "s2": 1, "s3": 0, "s4": 0, "s5": 1, "s6": 1},
    "h2": {"s1": 1, "s2": 1, "s3": 0, "s4": 1, "s5": 1, "s6": 1},
    "h3": {"s1": 0, "s2": 1, "s3": 1, "s4": 0, "s5": 1, "s6": 0},
}
MAJORITY = {s: 1.0 if sum(h[s] for h in HUMANS.values()) >= 2 else 0.0 for s in TEXTS}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    return make_logs(tmp_path_factory.mktemp("inspect"))


@pytest.fixture(scope="module")
def labels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("labels") / "human.jsonl"
    write_jsonl(
        path,
        [
            Rating(item_id=s, rater=rater, dimension="overall", value=v, cluster=s)
            for rater, values in HUMANS.items()
            for s, v in values.items()
        ],
    )
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as stop:
        code = int(stop.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_samples_become_candidate_items(logs: Logs) -> None:
    items = {it.item_id: it for it in inspect_judge_items(logs.one)}
    assert sorted(items) == sorted(TEXTS)
    first = items["s1"]
    assert [(m.role, m.content) for m in first.context] == [
        ("system", SYSTEM),
        ("user", TEXTS["s1"]),
    ]
    assert first.candidate == reply("mockllm/model", "s1")
    assert first.candidate_model == "mockllm/model"
    assert first.reference == reply("mockllm/model", "s1")  # the sample's text target
    assert items["s4"].reference == "something else"
    assert items["s2"].conversation_id == "s2"
    # two models: each reply named by sample and model, the sample the cluster
    both = inspect_judge_items(logs.two_models)
    assert sorted(i.item_id for i in both) == sorted(
        f"{s}:{m}" for s in TEXTS for m in ("mockllm/model", "mockllm/other")
    )
    assert {i.candidate for i in both if i.item_id == "s4:mockllm/other"} == {
        reply("mockllm/other", "s4")
    }


def test_scores_become_judgments_with_the_documented_grade_mapping(logs: Logs) -> None:
    js, scorers = inspect_judgments(logs.one)
    assert scorers == ["match", "stars", "warmth"]
    by = {(j.judge_id, j.item_id): j for j in js}
    for s in TEXTS:
        m = by[("inspect:match", s)]
        assert (m.status, m.overall, m.normalized) == ("ok", MATCH["mockllm/model"][s], m.overall)
        assert m.details["value"] == ("C" if MATCH["mockllm/model"][s] else "I")
        w = by[("inspect:warmth", s)]
        assert (w.overall, w.normalized) == (WARMTH[s], WARMTH[s])
        assert w.rationale == f"warmth {WARMTH[s]:g}"
    for s, value in STARS.items():
        st = by[("inspect:stars", s)]
        if value is None:  # the string "X": a recorded failure, never a score
            assert (st.status, st.overall) == ("parse_error", None)
            assert "'X'" in (st.error or "")
        else:  # 1-5: kept as it is, no 0-1 score
            assert (st.status, st.overall, st.normalized) == ("ok", float(value), None)


def test_calibrate_prints_the_agreement_table_of_an_inspect_scorer(
    logs: Logs, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["calibrate", "--judge", logs.one, "--human", labels, "--level", "nominal"]
    args += ["-B", "200", "--scorer", "match"]
    code, out, err = _cli(capsys, *args)
    assert code == 0, err
    assert "### Judge `inspect:match` vs humans" in out
    assert "| raw_agreement |" in out
    code, out, err = _cli(capsys, *args, "--json")
    assert code == 0, err
    (judge,) = json.loads(out)["dimensions"][0]["judges"]
    assert judge["judge"] == "inspect:match"
    metrics = judge["vs_humans"]["metrics"]
    j = np.array([MATCH["mockllm/model"][s] for s in TEXTS])
    h = np.array([MAJORITY[s] for s in TEXTS])
    # written out: share of equal labels, mean absolute difference, Pearson's r
    assert metrics["raw_agreement"]["estimate"] == pytest.approx(np.mean(j == h))
    assert metrics["mae"]["estimate"] == pytest.approx(np.mean(np.abs(j - h)))
    assert metrics["pearson"]["estimate"] == pytest.approx(np.corrcoef(j, h)[0, 1])
    assert judge["vs_humans"]["n"] == len(TEXTS)


def test_several_scorers_are_a_panel_with_their_mean_as_a_jury(
    logs: Logs, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["calibrate", "--judge", logs.one, "--human", labels, "-B", "100", "--json"]
    code, out, err = _cli(capsys, *args)
    assert code == 0, err
    judges = {r["judge"] for r in json.loads(out)["dimensions"][0]["judges"]}
    # all three scorers: stars is on 1-5, so no jury of unlike scales
    assert judges == {"inspect:match", "inspect:stars", "inspect:warmth"}
    code, out, err = _cli(capsys, *args, "--scorer", "match", "--scorer", "warmth")
    assert code == 0, err
    judges = {r["judge"]: r for r in json.loads(out)["dimensions"][0]["judges"]}
    assert sorted(judges) == ["inspect:jury", "inspect:match", "inspect:warmth"]
    # the jury scores each sample by the mean of the two scorers: its agreement with the
    # humans' majority (the median of three 0/1 labels), written out
    jury = np.array([(MATCH["mockllm/model"][s] + WARMTH[s]) / 2 for s in TEXTS])
    h = np.array([MAJORITY[s] for s in TEXTS])
    metrics = judges["inspect:jury"]["vs_humans"]["metrics"]
    assert metrics["mae"]["estimate"] == pytest.approx(np.mean(np.abs(jury - h)))
    assert metrics["pearson"]["estimate"] == pytest.approx(np.corrcoef(jury, h)[0, 1])
    assert judges["inspect:jury"]["vs_humans"]["n"] == len(TEXTS)


def test_score_candidates_judges_what_inspect_generated(
    logs: Logs, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))
    run = tmp_path / "run"
    copy = tmp_path / logs.one.name  # removed at the end: the export then has no conversations
    copy.write_bytes(logs.one.read_bytes())
    with FaultServer() as server:
        code, out, err = _cli(
            capsys,
            *["score", "--candidates", copy, "--lm", "openai/fake", "--api-base"],
            *[server.url, "--response-format", "json_object", "-o", run, "-q", "-B", "100"],
        )
        assert code == 0, err
        for s in TEXTS:  # each generated reply (and its target, the reference) reached the judge
            assert server.requests_containing(reply("mockllm/model", s)), s
    judged = read_judgments(run / "judgments.jsonl")
    assert sorted(j.item_id for j in judged) == sorted(TEXTS)
    assert {(j.status, j.candidate_model) for j in judged} == {("ok", "mockllm/model")}
    assert "mockllm/model" in out

    # ... and the run goes back into Inspect's world: a log Inspect's reader opens
    exported = run / "judged.eval"
    code, out, err = _cli(capsys, "export", run, "--format", "inspect", "-o", exported)
    assert code == 0, err
    assert is_inspect_log(exported)
    assert not is_inspect_log(run)  # still a run directory, with a log inside
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(exported))
    assert log.status == "success"
    assert log.samples is not None and len(log.samples) == len(judged)
    by = {j.item_id: j for j in judged}
    scored = 0
    for sample in log.samples:
        j = by[str(sample.id)]
        (score,) = (sample.scores or {}).values()
        assert score.value == pytest.approx(j.normalized)
        assert score.explanation == j.rationale
        assert sample.output.completion == reply("mockllm/model", str(sample.id))
        assert sample.input[-1].text == TEXTS[str(sample.id)]  # type: ignore[union-attr]
        scored += 1
    assert scored == len(judged)
    assert log.results is not None and len(log.results.scores) == 1
    from inspect_ai.log import read_eval_log_sample_summaries

    # the sample list `inspect view` shows comes from the summaries: one per item, scored
    summaries = read_eval_log_sample_summaries(str(exported))
    assert sorted(str(s.id) for s in summaries) == sorted(by)
    assert all(s.scores for s in summaries)

    copy.unlink()  # the run's input is gone: the samples say so instead of a conversation
    code, out, err = _cli(capsys, "export", run, "--format", "inspect", "-o", tmp_path / "b.json")
    assert code == 0, err
    again = read_eval_log(str(tmp_path / "b.json"))
    assert again.samples is not None and len(again.samples) == len(judged)
    for sample in again.samples:
        assert isinstance(sample.input, str) and "not available" in sample.input
        assert sample.scores


def test_rank_ranks_the_models_of_a_folder_of_logs(
    logs: Logs, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        capsys, "rank", logs.two_models, "--scorer", "match", "-B", "200", "--json"
    )
    assert code == 0, err
    rows = {r["model"]: r for r in json.loads(out)["rows"]}
    for model, grades in MATCH.items():
        assert rows[model]["score"]["estimate"] == pytest.approx(np.mean(list(grades.values())))
        assert rows[model]["score"]["n"] == len(TEXTS)


def test_rank_human_corrects_an_inspect_scorer(
    logs: Logs, labels: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        capsys, "rank", logs.one, "--human", labels, "--scorer", "warmth", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert (data["n_matched"], data["n_human_items"]) == (len(TEXTS), len(TEXTS))


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], err


def test_bad_inspect_inputs_are_one_line_errors(
    logs: Logs, labels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(capsys, "calibrate", "--judge", logs.unscored, "--human", labels)
    _one_line_error(code, err, "no sample of the Inspect log has a score")
    code, _, err = _cli(
        capsys, "calibrate", "--judge", logs.one, "--human", labels, "--scorer", "nope"
    )
    _one_line_error(code, err, "no scorer named 'nope'", "match, stars, warmth")
    stray = tmp_path / "stray.jsonl"
    write_jsonl(
        stray,
        [Rating(item_id="s9", rater="h1", value=1), Rating(item_id="s1", rater="h1", value=0)],
    )
    code, _, err = _cli(capsys, "calibrate", "--judge", logs.one, "--human", stray)
    _one_line_error(code, err, "1 of 2 labelled item ids match no sample", "'s9'")
    code, _, err = _cli(capsys, "rank", logs.one, "--human", stray, "--scorer", "match")
    _one_line_error(code, err, "'s9'")
    code, _, err = _cli(capsys, "rank", logs.one)  # match, warmth and stars (1-5): no jury
    _one_line_error(code, err, "several scorers", "--scorer")
    code, _, err = _cli(capsys, "rank", logs.one, "--scorer", "stars")
    _one_line_error(code, err, "--field overall")
    code, _, err = _cli(capsys, "score", SAMPLES, "--candidates", logs.one, "-o", tmp_path / "r")
    _one_line_error(code, err, "carries its own conversations")
    code, _, err = _cli(capsys, "rank", stray, "--scorer", "match")
    _one_line_error(code, err, "is not an Inspect log")


def test_without_the_extra_every_inspect_path_names_it(
    logs: Logs,
    labels: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = tmp_path / "run"  # a run to export: judgments only
    run.mkdir()
    write_jsonl(run / "judgments.jsonl", [Judgment(item_id="a", judge_id="j", overall=1.0)])
    for name in [m for m in sys.modules if m == "inspect_ai" or m.startswith("inspect_ai.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import inspect_ai: ImportError
    for argv in (
        ["score", "--candidates", logs.one, "-o", tmp_path / "out"],
        ["calibrate", "--judge", logs.one, "--human", labels],
        ["rank", logs.two_models],
        ["rank", logs.one, "--human", labels],
        ["export", run, "--format", "inspect", "-o", tmp_path / "x.eval"],
    ):
        code, _, err = _cli(capsys, *argv)
        _one_line_error(code, err, "pip install 'attune-judge[inspect]'")
