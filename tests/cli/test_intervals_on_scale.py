"""No interval leaves the scale (issue 42 point 3): each interval-printing command run on a
heavy-ceiling input (scores piled at the top, few conversations, people's labels on only 2 of
them) prints and writes intervals inside the scale.

Before, ``rank --human`` at 2 labelled conversations printed human-only intervals such as
``4.200 [−5.457, 13.857]`` on a 1–7 scale (a Wald interval with t₁ = 12.7).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attune_judge.data import ChatMessage, JudgeItem, Rating, read_judgments, write_jsonl
from tests._cli import run_cli

REFERENCE = "one two three four five six seven eight nine ten"


def _ceiling_run(tmp: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A lexical-judge scoring run (ROUGE-L F1 against the reference): m1 replies with the
    whole reference in 5 of 6 turns (F1 = 1), m2 in 3 of 6 (else 8 of 10 words: 0.889),
    12 conversations of 2 turns."""
    rng = np.random.default_rng(3)
    items = []
    for c in range(12):
        for t in range(2):
            for m, p_top in (("m1", 5 / 6), ("m2", 0.5)):
                k = 10 if rng.random() < p_top else 8
                items.append(
                    JudgeItem(
                        item_id=f"c{c}:{t}:{m}",
                        conversation_id=f"c{c}",
                        turn=t,
                        context=[ChatMessage(role="user", content="Hello.")],
                        candidate=" ".join(REFERENCE.split()[:k]),
                        candidate_model=m,
                        reference=REFERENCE,
                    )
                )
    write_jsonl(tmp / "items.jsonl", items)
    run = tmp / "run"
    argv = ["score", str(tmp / "items.jsonl"), "--rubric", "lexical", "-o", str(run), "-q"]
    code, _, err = run_cli([*argv, "-B", "300"], capsys)
    assert code == 0, err
    return run


def _labels(tmp: Path, run: Path) -> Path:
    """People's 1-7 labels of conversations c0 and c1 only, piled at 7."""
    ratings = [
        Rating(
            item_id=j.item_id,
            rater="p",
            value=7.0 if (j.normalized or 0) > 0.95 else 6.0,
            cluster=j.conversation_id,
        )
        for j in read_judgments(run / "judgments.jsonl")
        if j.conversation_id in ("c0", "c1")
    ]
    write_jsonl(tmp / "human.jsonl", ratings)
    return tmp / "human.jsonl"


def _intervals(obj: Any, path: str = "$") -> Iterator[tuple[str, float, float]]:
    """Every (where, lower, upper) pair of a JSON document."""
    if isinstance(obj, dict):
        lo, hi = obj.get("lower"), obj.get("upper")
        if isinstance(lo, int | float) and isinstance(hi, int | float):
            yield path, float(lo), float(hi)
        for k, v in obj.items():
            yield from _intervals(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _intervals(v, f"{path}[{i}]")


def _inside(doc: Any, bounds: tuple[float, float]) -> None:
    found = list(_intervals(doc))
    assert found
    for where, lo, hi in found:
        assert bounds[0] - 1e-12 <= lo <= hi <= bounds[1] + 1e-12, (where, lo, hi)


def test_no_interval_leaves_the_scale_in_any_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _ceiling_run(tmp_path, capsys)
    # score: the model blocks' intervals and the stored leaderboard (normalised 0-1)
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    (block,) = summary["judges"].values()
    _inside(block["models"], (0, 1))
    _inside(block["leaderboard"]["rows"], (0, 1))

    # rank RUN, recomputed with other settings
    code, out, err = run_cli(["rank", str(run), "-B", "200", "--json"], capsys)
    assert code == 0, err
    _inside(json.loads(out)["rows"], (0, 1))

    # rank FILE --scale: the same scores as a 1-7 scores table
    table = tmp_path / "scores.csv"
    with table.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "cluster", "score"])
        for j in read_judgments(run / "judgments.jsonl"):
            w.writerow([j.candidate_model, j.conversation_id, 1 + 6 * (j.normalized or 0)])
    code, out, err = run_cli(["rank", str(table), "--scale", "1,7", "-B", "200", "--json"], capsys)
    assert code == 0, err
    _inside(json.loads(out)["rows"], (1, 7))

    # rank --human at 2 labelled conversations: console JSON and the written summary.json
    human = _labels(tmp_path, run)
    argv = ["rank", str(run), "--human", str(human), "--human-scale", "1,7"]
    code, out, err = run_cli([*argv, "--json", "--report", str(tmp_path / "ppi")], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["n_labelled_clusters"] == 2
    _inside(data["rows"], (0, 1))
    _inside(data["differences"], (-1, 1))
    assert any(w.startswith("intervals clipped to the scale") for w in data["warnings"])
    written = json.loads((tmp_path / "ppi" / "summary.json").read_text("utf-8"))["ppi"]
    _inside(written["rows"], (0, 1))
    _inside(written["differences"], (-1, 1))
    assert written["bounds"] == [0.0, 1.0]
    code, md, _ = run_cli(argv, capsys)
    assert code == 0 and "intervals clipped to the scale" in md


def test_rank_human_without_a_human_scale_says_its_intervals_are_unbounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _ceiling_run(tmp_path, capsys)
    human = _labels(tmp_path, run)
    code, out, err = run_cli(["rank", str(run), "--human", str(human), "--json"], capsys)
    assert code == 0, err
    assert any("no --human-scale" in w for w in json.loads(out)["warnings"])


def _ceiling_items(tmp: Path) -> Path:
    """Replies carrying the score the stub judge gives every criterion (``[5]`` or ``[4]``):
    m1 5 in 19 of 20 turns, m2 in 16 of 20 (10 conversations of 2 turns)."""
    fours = {"m1": {(3, 1)}, "m2": {(0, 0), (2, 1), (5, 0), (8, 1)}}
    items = [
        JudgeItem(
            item_id=f"c{c}:{t}:{m}",
            conversation_id=f"c{c}",
            turn=t,
            context=[ChatMessage(role="user", content=f"Hello {c}.{t}.")],
            candidate=f"{m} says [{4 if (c, t) in fours[m] else 5}]",
            candidate_model=m,
            reference="A reply.",
        )
        for c in range(10)
        for t in range(2)
        for m in ("m1", "m2")
    ]
    write_jsonl(tmp / "items.jsonl", items)
    return tmp / "items.jsonl"


def _marked_score(body: dict[str, Any]) -> str:
    from tests.judging._stub_judges import requested_fields

    score = 4 if "says [4]" in body["messages"][-1]["content"] else 5
    fields = requested_fields(body)
    return json.dumps({f: "fine" if f in ("rationale", "reasoning") else score for f in fields})


def _with_stub(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``attune-judge ARGV --lm openai/stub`` against the loopback stub judge above."""
    from tests._openai_stub import openai_stub

    with openai_stub(_marked_score) as server:
        lm = ["--lm", "openai/stub", "--api-base", server.url, "-B", "300"]
        code, _, err = run_cli([*argv, *lm], capsys)
    assert code == 0, err


def test_rank_of_a_run_keeps_overall_scores_on_the_rubric_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rank RUN --field overall`` ranks on the rubric's 1-5 scale (``attune-empathy-anchored``),
    read from the run (every judgment records normalized = (overall - 1) / 4), without
    --scale: no interval leaves it (before, m2's 4.800 had [4.555, 5.045]); --scale must agree
    with it."""
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    run = tmp_path / "run"
    argv = ["score", str(_ceiling_items(tmp_path)), "--rubric", "attune-empathy-anchored"]
    _with_stub([*argv, "-o", str(run), "-q"], capsys)
    means = {"m1": (19 * 5 + 4) / 20, "m2": (16 * 5 + 4 * 4) / 20}
    argv = ["rank", str(run), "--field", "overall", "-B", "1000", "--json"]
    code, first, err = run_cli(argv, capsys)
    assert code == 0, err
    rows = json.loads(first)["rows"]
    assert {r["model"]: r["score"]["estimate"] for r in rows} == pytest.approx(means)
    _inside(rows, (1, 5))
    # the same on the judgments copied out of the run (a Judgment JSONL)
    code, out, err = run_cli(["rank", str(run / "judgments.jsonl"), *argv[2:]], capsys)
    assert code == 0, err
    _inside(json.loads(out)["rows"], (1, 5))
    # --scale equal to the run's scale changes nothing; another one is refused, naming both
    code, same, err = run_cli([*argv, "--scale", "1,5"], capsys)
    assert (code, same) == (0, first), err
    for scale, field in (("1,7", "overall"), ("1,5", "normalized")):
        code, _, err = run_cli([*argv[:2], "--field", field, "--scale", scale], capsys)
        assert code == 2 and f"--scale {scale} contradicts" in err, err


def test_sensitivity_keeps_the_variants_scores_on_zero_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sensitivity`` on the heavy-ceiling replies: every variant's model means stay on the
    normalised 0-1 scale (before, m2's 0.950 had [0.889, 1.011] under both variants) and
    equal the score run's bounded intervals of the same judge."""
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    (tmp_path / "variants.yaml").write_text(
        "name: ceiling\nbase:\n  rubric: attune-empathy-anchored\n"
        "  judge: {reasoning: false, use_reference: true}\nperturbations:\n"
        "  - {name: no-fit, kind: remove_criterion, criterion: fit}\n",
        "utf-8",
    )
    run = tmp_path / "run"
    argv = ["sensitivity", str(_ceiling_items(tmp_path)), "-o", str(run)]
    _with_stub([*argv, "--variants", str(tmp_path / "variants.yaml")], capsys)
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    variants = summary["sensitivity"]["variants"]
    assert set(variants) == {"base", "no-fit"}
    for v in variants.values():
        _inside(v["leaderboard"], (0, 1))
    _inside(summary["sensitivity"]["analysis"]["rankings"], (0, 1))
    base = {r["model"]: r["score"] for r in variants["base"]["leaderboard"]}
    judged = next(b for b in summary["judges"].values() if b["leaderboard"] is not None)
    for row in judged["leaderboard"]["rows"]:
        got = base[row["model"]]
        assert (got["lower"], got["upper"]) == pytest.approx(
            (row["score"]["lower"], row["score"]["upper"])
        )
