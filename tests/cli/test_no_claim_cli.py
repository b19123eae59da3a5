"""No claim without the data behind it, through the CLI (issue 42, Done when): a model seen in
one conversation next to two models seen in twelve gets no rank claim in ``rank RUN`` of a
scoring run, in the Bradley–Terry ranking of a pairwise run (``rank RUN``), and in the reports
of both (``report RUN``). ``rank --human`` through the CLI is in
``tests/calibration/test_claims.py``.

The rated run uses the model-free lexical judge (ROUGE-L F1 of the reply against the
reference: a reply of the reference's first k of 10 words scores 2k / (10 + k)); the pairwise
run a loopback OpenAI-compatible stub that prefers the reply marked ``[win]``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attune_judge.data import ChatMessage, JudgeItem, write_jsonl
from attune_judge.judges import pairwise_item
from tests._cli import run_cli
from tests._openai_stub import openai_stub
from tests.judging._stub_judges import replies

REFERENCE = "one two three four five six seven eight nine ten"
CONTEXT = [ChatMessage(role="user", content="I feel low today.")]


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _reply(k: int) -> str:
    return " ".join(REFERENCE.split()[:k])


def _rated_items(path: Path) -> None:
    """m1 (3-5 words of 10: 0.46-0.67) and m2 (2-4: 0.33-0.57) in 12 conversations of 3
    turns (k drawn from base − 1 .. base + 1, seeded); m3 (7-8 words: 0.82-0.89) in
    conversation c0 only."""
    draws = iter(np.random.default_rng(0).integers(-1, 2, 72).tolist())
    items = [
        JudgeItem(
            item_id=f"c{c}:{t}:{m}",
            conversation_id=f"c{c}",
            turn=t,
            context=CONTEXT,
            candidate=_reply(base + next(draws)),
            candidate_model=m,
            reference=REFERENCE,
        )
        for c in range(12)
        for t in range(3)
        for m, base in (("m1", 4), ("m2", 3))
    ]
    items += [
        JudgeItem(
            item_id=f"c0:{t}:m3",
            conversation_id="c0",
            turn=t,
            context=CONTEXT,
            candidate=_reply(k),
            candidate_model="m3",
            reference=REFERENCE,
        )
        for t, k in enumerate((7, 7, 8))
    ]
    write_jsonl(path, items)


def _report_says_no_claim_for_m3(run: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, _, err = run_cli(["report", str(run)], capsys)
    assert code == 0, err
    text = (run / "report.md").read_text("utf-8")
    # the ranking tables (their first column is the rank) list m3 without one, and without a
    # rank set or P(rank 1)
    ranked = [x for x in text.splitlines() if x.startswith(("| 1 |", "| 2 |", "| 3 |", "| — |"))]
    assert ranked, text
    assert not any("| m3 |" in x and not x.startswith("| — | m3 |") for x in ranked), text
    m3 = [x for x in ranked if x.startswith("| — | m3 |")]
    assert m3 and all(x.rstrip().endswith("| — | — |") or "| — | — |" in x for x in m3), m3
    assert "No rank claim" in text and "m3 (only 1 conversation" in text
    return text


def test_rank_and_report_of_a_scoring_run_make_no_claim_for_a_one_conversation_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, run = tmp_path / "items.jsonl", tmp_path / "run"
    _rated_items(items)
    code, _, err = run_cli(
        ["score", str(items), "--rubric", "lexical", "-o", str(run), "-q", "-B", "400"], capsys
    )
    assert code == 0, err
    code, out, err = run_cli(["rank", str(run), "-B", "400", "--json"], capsys)
    assert code == 0, err
    rows = {r["model"]: r for r in json.loads(out)["rows"]}
    assert rows["m3"]["score"]["estimate"] > rows["m1"]["score"]["estimate"]  # the best mean
    assert "only 1 conversation" in rows["m3"]["no_rank_claim"]
    assert rows["m3"]["rank_set_simultaneous"] == [1, 3] and rows["m3"]["p_rank_1"] is None
    for m in ("m1", "m2"):
        assert rows[m]["no_rank_claim"] is None and rows[m]["p_rank_1"] is not None
    code, md, _ = run_cli(["rank", str(run), "-B", "400"], capsys)
    assert "| — | m3 |" in md and "No rank claim" in md
    _report_says_no_claim_for_m3(run, capsys)


def _pairs_judge(body: dict[str, Any]) -> str:
    a, b = replies(body)
    wa, wb = "[win]" in a, "[win]" in b
    verdict = "A" if wa and not wb else "B" if wb and not wa else "tie"
    return json.dumps({"verdict": verdict, "rationale": "markers"})


def _pairwise_items(path: Path) -> None:
    """m1 vs m2 in 12 conversations (6 pairs each, m1 winning 2 to 5 of them); m3 compared 4
    times, in conversation c0 only (beats m1 three times, loses to m2 once)."""
    m1_wins = (4, 3, 5, 4, 2, 4, 5, 3, 4, 4, 3, 5)
    rows: list[tuple[str, str, str, bool]] = [
        (f"c{c}", "m1", "m2", k < m1_wins[c]) for c in range(12) for k in range(6)
    ]
    rows += [("c0", "m3", "m1", True)] * 3 + [("c0", "m3", "m2", False)]
    items = [
        pairwise_item(
            f"pair{k}",
            conv,
            CONTEXT,
            "[win] a reply" if a_wins else "a reply",
            "a reply" if a_wins else "[win] a reply",
            option_a=oa,
            option_b=ob,
            turn=k,
        )
        for k, (conv, oa, ob, a_wins) in enumerate(rows)
    ]
    write_jsonl(path, items)


def test_the_bradley_terry_ranking_of_a_pairwise_run_makes_no_claim_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items, run = tmp_path / "pairs.jsonl", tmp_path / "run"
    _pairwise_items(items)
    with openai_stub(_pairs_judge) as server:
        argv = ["score", str(items), "--rubric", "attunebench-pairwise", "-o", str(run), "-q"]
        argv += ["--lm", "openai/stub", "--api-base", server.url, "-B", "300"]
        code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    code, out, err = run_cli(["rank", str(run), "--json", "-B", "300"], capsys)
    assert code == 0, err
    (group,) = json.loads(out)["rankings"]
    bt = group["bradley_terry"]
    j = bt["labels"].index("m3")
    assert bt["strengths"][j]["n_clusters"] == 1
    assert "m3" in bt["no_rank_claim"] and "only 1 conversation" in bt["no_rank_claim"]["m3"]
    sim = bt["rank_sets_simultaneous"]
    assert (sim["lower"][j], sim["upper"][j]) == (1, 3)
    assert bt["rank_probabilities"]["p_rank_1"][j] is None
    # m1 and m2, compared in 12 conversations, keep their intervals and claims (before: m3,
    # absent from a third of the resamples, withheld every interval and every claim)
    assert set(bt["no_rank_claim"]) == {"m3"}
    for m in ("m1", "m2"):
        i = bt["labels"].index(m)
        assert bt["strengths"][i]["lower"] is not None and bt["strengths"][i]["upper"] is not None
        assert bt["rank_probabilities"]["p_rank_1"][i] is not None
    # m1 won 46 of the 72 m1-m2 comparisons: ahead of m2, with room for m3 anywhere
    i1, i2 = bt["labels"].index("m1"), bt["labels"].index("m2")
    assert (sim["lower"][i1], sim["upper"][i1]) == (1, 2)
    assert (sim["lower"][i2], sim["upper"][i2]) == (2, 3)
    code, md, _ = run_cli(["rank", str(run), "-B", "300"], capsys)
    line = next(x for x in md.splitlines() if "| m3 |" in x)
    assert line.startswith("| — | m3 |") and "| — | — |" in line
    assert "No rank claim" in md
    # m1's point rank is 2 (m3's strength is higher; m3 just makes no claim), its set 1-2
    assert any(x.startswith("| 2 | m1 |") and "| 1–2 |" in x for x in md.splitlines()), md
    text = _report_says_no_claim_for_m3(run, capsys)
    assert "Bradley–Terry" in text
    assert any(x.startswith("| 2 | m1 |") and "| 1–2 |" in x for x in text.splitlines()), text


def _rank_cells(text: str, models: tuple[str, ...]) -> dict[str, set[str]]:
    """The first cell (the rank) of every Markdown table row of each model."""
    cells: dict[str, set[str]] = {m: set() for m in models}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if line.startswith("|") and len(parts) > 3 and parts[2] in models:
            cells[parts[2]].add(parts[1])
    return cells


def test_below_ten_conversations_no_ranking_shows_a_point_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four conversations: every model is seen in fewer than 10, so none has a rank in
    ``rank``'s leaderboard, the Bradley–Terry ranking or either run's report (before, the
    report and the leaderboard printed point ranks 1 and 2 where the Bradley–Terry table
    printed —)."""
    items, pairs = tmp_path / "items.jsonl", tmp_path / "pairs.jsonl"
    _rated_items(items)
    _pairwise_items(pairs)
    for path in (items, pairs):  # conversations c1-c4 only (m3, in c0, is left out)
        lines = path.read_text("utf-8").splitlines()
        kept = [x for x in lines if any(f'"conversation_id":"c{c}"' in x for c in range(1, 5))]
        path.write_text("\n".join(kept) + "\n", "utf-8")
    rated, compared = tmp_path / "rated", tmp_path / "compared"
    code, _, err = run_cli(
        ["score", str(items), "--rubric", "lexical", "-o", str(rated), "-q", "-B", "300"], capsys
    )
    assert code == 0, err
    with openai_stub(_pairs_judge) as server:
        argv = ["score", str(pairs), "--rubric", "attunebench-pairwise", "-o", str(compared)]
        argv += ["-q", "--lm", "openai/stub", "--api-base", server.url, "-B", "300"]
        code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    for run in (rated, compared):
        code, md, err = run_cli(["rank", str(run), "-B", "300"], capsys)
        assert code == 0, err
        report = (run / "report.md").read_text("utf-8")
        for text in (md, report):
            cells = _rank_cells(text, ("m1", "m2"))
            assert cells["m1"] and cells["m2"], text
            assert cells == {"m1": {"—"}, "m2": {"—"}}, (cells, text)
            assert "only 4 conversations" in text
