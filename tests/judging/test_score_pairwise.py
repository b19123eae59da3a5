"""``score --rubric attunebench-pairwise`` on AttuneBench data, then ``calibrate`` against the
participants' own preferences: numbers checked by hand.

The judge is a deterministic model behind a loopback OpenAI-compatible stub (the real HTTP
path: DSPy, LiteLLM, JSON answers, both orders), so every number is known in advance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.conftest import SAMPLES
from tests.judging._stub_judges import always_a, longer_wins, read_jsonl_rows


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's stub answers differently: a cached answer of another test must not leak."""
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _score(tmp_path: Path, reply: Any, name: str, *extra: str) -> Path:
    run = tmp_path / name
    with openai_stub(reply) as server:
        argv = ["score", str(SAMPLES), "--rubric", "attunebench-pairwise", "-o", str(run), "-q"]
        code = _cli([*argv, "--lm", "openai/stub", "--api-base", server.url, *extra])
        n_requests = len(server.requests)
    assert code == 0
    assert n_requests == 2 * len(read_jsonl_rows(run / "judgments.jsonl"))  # both orders
    return run


def _prefs(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "prefs.jsonl"
    assert _cli(["data", "preferences", str(SAMPLES), "-o", str(path)]) == 0
    return read_jsonl_rows(path)


def test_every_participant_comparison_is_judged_in_both_orders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefs = _prefs(tmp_path)
    run = _score(tmp_path, longer_wins, "run")
    out = capsys.readouterr().out
    judgments = read_jsonl_rows(run / "judgments.jsonl")
    # the judged items are exactly the participants' comparisons (same ids: calibrate joins)
    assert {j["item_id"] for j in judgments} == {p["item_id"] for p in prefs}
    by_id = {p["item_id"]: p for p in prefs}
    for j in judgments:
        p = by_id[j["item_id"]]
        longer = "A" if len(p["text_a"]) > len(p["text_b"]) else "B"
        assert (j["status"], j["verdict"]) == ("ok", longer)
        # order B-A was asked too, and its answer mapped back agrees
        assert j["details"]["order_ab"] == longer
        assert j["details"]["order_ba"] == {"A": "B", "B": "A"}[longer]
    block = next(iter(json.loads((run / "summary.json").read_text())["judges"].values()))
    pairwise = block["pairwise"]
    n_a = sum(len(p["text_a"]) > len(p["text_b"]) for p in prefs)
    assert pairwise["verdicts"] == {"A": n_a, "B": len(prefs) - n_a, "tie": 0, "inconsistent": 0}
    # a judge that never flips: flip rate 0, first position wins exactly half the decisive calls
    bias = pairwise["position_bias"]
    assert bias["flip_rate"]["estimate"] == 0.0
    assert bias["first_position_win_rate"]["estimate"] == 0.5
    pair = pairwise["by_pair"]["human_edited vs original"]
    expected = sum({p["option_a"], p["option_b"]} == {"human_edited", "original"} for p in prefs)
    assert pair["n"] == expected
    assert "position bias: first-position win rate 0.500" in out
    assert "complete: yes" in out
    # the report shows the verdicts and the position bias with intervals, not a leaderboard
    # of "which reply happened to be listed first"
    report = (run / "report.md").read_text("utf-8")
    assert "### Pairwise verdicts" in report and "### Leaderboard" not in report
    n_ho = pair["n"]
    wins_h = sum(
        (p["option_a"], p["option_b"])
        in {("human_edited", "original"), ("original", "human_edited")}
        and (p["text_a"] if p["option_a"] == "human_edited" else p["text_b"])
        == max(p["text_a"], p["text_b"], key=len)
        for p in prefs
    )
    assert (
        f"| human_edited vs original | {n_ho} | human_edited {wins_h}, original {n_ho - wins_h} |"
        in report
    )
    assert (
        "| first-position win rate (0.5 = no bias) "
        "| 0.500 [0.500, 0.500] (degenerate) | 60 |" in report
    )
    assert (
        "| flip rate (winner changes with the order) "
        "| 0.000 [0.000, 0.000] (degenerate) | 30 |" in report
    )


def test_a_judge_that_always_says_a_is_inconsistent_and_fully_position_biased(
    tmp_path: Path,
) -> None:
    run = _score(tmp_path, always_a, "run")
    block = next(iter(json.loads((run / "summary.json").read_text())["judges"].values()))
    pairwise = block["pairwise"]
    assert pairwise["verdicts"]["inconsistent"] == pairwise["n_pairs"] == 30
    bias = pairwise["position_bias"]
    assert bias["flip_rate"]["estimate"] == 1.0
    assert bias["first_position_win_rate"]["estimate"] == 1.0
    assert bias["flip_rate"]["n_clusters"] == 8  # the eight sample conversations
    report = (run / "report.md").read_text("utf-8")
    assert "inconsistent 30 (opposite winners in the two orders)" in report
    assert (
        "| first-position win rate (0.5 = no bias) "
        "| 1.000 [1.000, 1.000] (degenerate) | 60 |" in report
    )


def test_candidate_pairs_and_candidate_vs_reference(tmp_path: Path) -> None:
    from attune_judge.data import attunebench_to_judge_items, load_attunebench

    turns = list(attunebench_to_judge_items(load_attunebench(SAMPLES)))
    cands = tmp_path / "candidates.jsonl"
    with cands.open("w") as fh:
        for item in turns:
            for model, text in (("brief", "OK."), ("warm", item.candidate + " I'm here.")):
                row = {"conversation_id": item.conversation_id, "turn": item.turn}
                fh.write(json.dumps({**row, "model": model, "response": text}) + "\n")
    run = _score(tmp_path, longer_wins, "run", "--candidates", str(cands))
    judgments = read_jsonl_rows(run / "judgments.jsonl")
    ids = {j["item_id"] for j in judgments}
    # 30 participant comparisons + per annotated turn: brief-warm, brief-ref, warm-ref
    assert len(ids) == 30 + 3 * len(turns)
    some = turns[0]
    prefix = f"{some.conversation_id}:{some.turn}:pair"
    assert {f"{prefix}:brief:warm", f"{prefix}:brief:reference", f"{prefix}:warm:reference"} <= ids
    pairs = next(iter(json.loads((run / "summary.json").read_text())["judges"].values()))
    counts = pairs["pairwise"]["by_pair"]
    # the longer reply always wins: warm beats brief at every turn, "OK." never wins
    assert counts["brief vs warm"]["wins"] == {"brief": 0, "warm": len(turns)}
    assert counts["brief vs reference"]["wins"]["brief"] == 0


def _kappa(human: list[str], judge: list[str]) -> float:
    labels = sorted(set(human) | set(judge))
    n = len(human)
    p_o = sum(h == j for h, j in zip(human, judge, strict=True)) / n
    p_e = sum((human.count(k) / n) * (judge.count(k) / n) for k in labels)
    return (p_o - p_e) / (1 - p_e)


def test_score_then_calibrate_against_exported_preferences_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefs = _prefs(tmp_path)
    run = _score(tmp_path, longer_wins, "run")
    capsys.readouterr()
    out_dir = tmp_path / "cal"
    argv = ["calibrate", "--human", str(tmp_path / "prefs.jsonl"), "--judge", str(run)]
    assert _cli([*argv, "--json", "--B", "200", "-o", str(out_dir)]) == 0
    data = json.loads(capsys.readouterr().out)
    answered = [p for p in prefs if p["winner"] is not None]
    human = [p["winner"] for p in answered]
    longer = ["A" if len(p["text_a"]) > len(p["text_b"]) else "B" for p in answered]
    rows = {r["rater"]: r for r in data["comparison"]["rows"]}
    agree = sum(h == j for h, j in zip(human, longer, strict=True)) / len(human)
    assert rows["judge"]["n_compared"] == len(answered) == 27
    assert rows["judge"]["three_class"]["estimate"] == pytest.approx(agree)
    assert rows["judge"]["kappa"]["estimate"] == pytest.approx(_kappa(human, longer))
    # no ties on either side: accuracy excluding ties is the same number on the same items
    assert rows["judge"]["excluding_ties"]["estimate"] == pytest.approx(agree)
    # this judge IS the length rule, so the length-only baseline matches it exactly
    assert rows["length-only"]["three_class"]["estimate"] == pytest.approx(agree)
    first = sum(h == "A" for h in human) / len(human)
    assert rows["position-only"]["three_class"]["estimate"] == pytest.approx(first)
    assert rows["position-only"]["kappa"]["estimate"] == pytest.approx(0.0)
    lo, hi = rows["judge"]["three_class"]["lower"], rows["judge"]["three_class"]["upper"]
    assert lo < agree < hi
    report = (out_dir / "report.md").read_text()
    assert "length-only baseline" in report and "position-only baseline" in report
    assert f"{agree:.3f}" in report
