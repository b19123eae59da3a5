"""Degenerate judges (issue 12, point 7): a judge that gives one value to every item of a
criterion, or whose scores only count the criteria off in order, is named by a warning, in
``summary.json`` and in the report — by ``score``, ``sensitivity``, ``validate`` and ``bench``.

The commands run in-process against the fault server, whose ``answer`` hook plays the
degenerate judge; the same commands with the server's varied answers are the control.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment
from attune_judge.runner import degenerate_findings, degenerate_judgments
from attune_judge.runs import read_summary
from attune_judge.testing import FaultServer, answer_for_schema
from tests._http_clients import _closed_http_clients
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(180)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

DATA = SAMPLES / "conversation_5.json"


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's server plays its own judge: no answer is replayed from another test."""
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in argv])
    return int(stop.value.code or 0)


# -- the rule, on hand-made answers ---------------------------------------------------------


def test_a_constant_criterion_is_found_and_a_varied_one_is_not() -> None:
    answers = [{"empathy": 4, "clarity": 1 + i % 3} for i in range(6)]
    (finding,) = degenerate_findings(answers)
    assert (finding["criterion"], finding["reason"], finding["value"], finding["n"]) == (
        "empathy",
        "constant",
        4,
        6,
    )


def test_scores_that_count_the_criteria_off_are_one_finding_for_the_judge() -> None:
    for start in (0, 1):
        answers = [{"a": start, "b": start + 1, "c": start + 2}] * 5
        (finding,) = degenerate_findings(answers)
        assert finding["reason"] == "criterion_order" and finding["criterion"] is None
    # counting off in some answers and not in others is two constant criteria at most, not order
    mixed = [{"a": 1, "b": 2}] * 4 + [{"a": 1, "b": 3}]
    assert [f["criterion"] for f in degenerate_findings(mixed)] == ["a"]


def test_too_few_answers_are_not_called_degenerate() -> None:
    assert degenerate_findings([{"a": 3}] * 4) == []
    assert degenerate_findings([{"a": 3}] * 5) != []


def test_only_ok_judgments_count_and_verdicts_are_checked_too() -> None:
    def j(i: int, status: str = "ok", verdict: str | None = None) -> Judgment:
        return Judgment(item_id=f"i{i}", judge_id="J", status=status, verdict=verdict)  # type: ignore[arg-type]

    judgments = [j(i, verdict="A") for i in range(5)] + [j(9, "parse_error")]
    (finding,) = degenerate_judgments(judgments)
    assert (finding["criterion"], finding["value"]) == ("verdict", "A")
    assert degenerate_judgments([j(i, verdict="A") for i in range(4)] + [j(9, verdict="B")]) == []


# -- the commands ---------------------------------------------------------------------------


def _constant(schema: dict[str, Any], text: str, rng: random.Random) -> dict[str, Any]:
    """Every integer field 2, whatever the item (the rest as the server would answer)."""
    good = answer_for_schema(schema, rng)
    props = schema.get("properties", {})
    return {k: 2 if props[k].get("type") == "integer" else v for k, v in good.items()}


def _in_order(schema: dict[str, Any], text: str, rng: random.Random) -> dict[str, Any]:
    """The integer fields numbered 1, 2, 3, ... in the order the schema lists them."""
    good = answer_for_schema(schema, rng)
    props = schema.get("properties", {})
    ints = [k for k in good if props[k].get("type") == "integer"]
    return {**good, **{k: i + 1 for i, k in enumerate(ints)}}


def _score(tmp_path: Path, answer: Any, name: str) -> tuple[int, Path]:
    out = tmp_path / name
    with FaultServer(answer=answer) as server:
        argv = ["score", DATA, "--lm", "openai/fake", "--api-base", server.url]
        code = _cli([*argv, "--response-format", "json_object", "-B", "100", "-o", out, "-q"])
        assert server.requests > 0
    return code, out


def test_score_warns_and_marks_a_constant_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _score(tmp_path, _constant, "run")
    err = capsys.readouterr().err
    assert code == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    (block,) = summary["judges"].values()
    criteria = {k for m in block["models"].values() for k in m["criteria_means"]}
    assert criteria and {f["criterion"] for f in block["degenerate"]} == criteria
    assert all(f["reason"] == "constant" and f["value"] == 2 for f in block["degenerate"])
    assert err.count("warning: degenerate judge") == len(criteria)
    assert "Degenerate judge" in (out / "report.md").read_text("utf-8")
    assert "Degenerate judge" in (out / "report.html").read_text("utf-8")
    read_summary(out)  # the typed summary reads it


def test_score_calls_scores_in_criterion_order_degenerate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _score(tmp_path, _in_order, "run")
    assert code == 0
    (block,) = json.loads((out / "summary.json").read_text("utf-8"))["judges"].values()
    (finding,) = block["degenerate"]
    assert finding["reason"] == "criterion_order"
    assert "scores the criteria in their order" in capsys.readouterr().err


def test_an_informative_judge_gets_no_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _score(tmp_path, None, "run")  # the server's answers vary with the item
    assert code == 0
    (block,) = json.loads((out / "summary.json").read_text("utf-8"))["judges"].values()
    assert block["degenerate"] == []
    assert "degenerate" not in capsys.readouterr().err
    assert "Degenerate judge" not in (out / "report.md").read_text("utf-8")


def test_sensitivity_warns_for_a_constant_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    variants = tmp_path / "variants.yaml"
    variants.write_text(
        "name: t\nbase:\n  rubric: attunebench-reference\nperturbations:\n"
        "  - name: shuffled\n    kind: shuffle_criteria\n    seed: 1\n",
        "utf-8",
    )
    out = tmp_path / "sens"
    with FaultServer(answer=_constant) as server:
        argv = ["sensitivity", DATA, "--variants", variants, "--lm", "openai/fake"]
        argv += ["--api-base", server.url, "--response-format", "json_object", "-o", out, "-q"]
        code = _cli([*argv, "-B", "100"])
    err = capsys.readouterr().err
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert all(b["degenerate"] for b in summary["judges"].values())
    assert "warning: degenerate judge" in err
    assert "Degenerate judge" in (out / "report.md").read_text("utf-8")


def test_validate_warns_for_a_constant_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "val"
    with FaultServer(answer=_constant) as server:
        argv = ["validate", "--set", "duo", "--lm", "openai/fake", "--api-base", server.url]
        argv += ["--response-format", "json_object", "--limit", "8", "-B", "100", "-o", out]
        code = _cli(argv)
    printed = capsys.readouterr()
    assert code == 0, printed.err
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["degenerate"] and all(f["value"] == 2 for f in summary["degenerate"])
    assert "warning: degenerate judge" in printed.out
    assert "Degenerate judge" in (out / "report.md").read_text("utf-8")
    read_summary(out)


def test_bench_warns_for_a_constant_drafting_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench"
    with FaultServer(answer=_constant) as server:
        argv = ["bench", SAMPLES, "--max-conversations", "3", "--tasks", "drafting"]
        argv += ["-m", f"openai/fake@api_base={server.url}"]
        argv += ["--judge-lm", "openai/fake", "--api-base", server.url]
        code = _cli([*argv, "--response-format", "json_object", "-B", "100", "-o", out, "-q"])
    err = capsys.readouterr().err
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    found = {f["criterion"] for f in summary["degenerate"]}
    assert found and all(name.startswith("judge_scores.") for name in found)
    assert "warning: degenerate drafting judge" in err
    assert "Degenerate judge" in (out / "report.md").read_text("utf-8")
    read_summary(out)


def test_pairwise_judge_is_degenerate_only_when_every_verdict_is_the_same() -> None:
    """Issue 29: 22 pairs answered A, B or tie and 6 ``inconsistent`` are not "inconsistent
    to every item"; one verdict on every pair is degenerate."""

    def pair(i: int, verdict: str) -> Judgment:
        scores = (
            {}
            if verdict == "inconsistent"
            else {"a_win": {"A": 1.0, "tie": 0.5, "B": 0.0}[verdict]}
        )
        return Judgment(item_id=f"p{i}", judge_id="J", verdict=verdict, scores=scores)

    mixed = [pair(i, "ABtie"[i % 3] if i % 3 < 2 else "tie") for i in range(22)]
    mixed += [pair(22 + i, "inconsistent") for i in range(6)]
    assert degenerate_judgments(mixed) == []
    (finding,) = degenerate_judgments([pair(i, "inconsistent") for i in range(6)])
    assert finding["criterion"] == "verdict" and finding["value"] == "inconsistent"
    (finding,) = degenerate_judgments([pair(i, "A") for i in range(6)])
    assert finding["criterion"] == "verdict" and finding["value"] == "A"
