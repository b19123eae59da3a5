"""``calibrate`` of a pairwise judge WITH ties, on eight comparisons worked out by hand.

The human file and the judge's Judgment records are written here (no model): one comparison
per conversation c1..c8, option A ``original``, option B ``human_edited``.

    item  human  judge (verdict)        judge as a class   agree?
    1     A      A                      A                  yes
    2     A      B                      B                  no
    3     B      B                      B                  yes
    4     tie    tie                    tie                yes
    5     B      inconsistent           tie                no
    6     A      A                      A                  yes
    7     tie    A                      A                  no
    8     B      tie                    tie                no

``inconsistent`` (opposite winners in the two orders) counts as a tie.

Judge, 3-class agreement: items 1, 3, 4, 6 agree → 4/8 = 0.5.
Judge, Cohen's κ: p_o = 1/2. Marginals: human A 3/8, B 3/8, tie 2/8; judge A 3/8 (1, 6, 7),
B 2/8 (2, 3), tie 3/8 (4, 5, 8). p_e = (3·3 + 3·2 + 2·3)/64 = 21/64.
κ = (32/64 − 21/64) / (1 − 21/64) = (11/64) / (43/64) = 11/43.
Judge, accuracy excluding ties (a tie on either side drops the item): 4, 5, 7, 8 drop; on 1, 2,
3, 6 the judge agrees on 1, 3, 6 → 3/4, over 4 comparisons.

Texts: A is the longer text on items 1-4, B on items 5-8, so the length-only baseline says
A A A A B B B B. Against the human: agrees on 1, 2, 5, 8 → 4/8 = 0.5. κ: its marginals are A 4/8,
B 4/8, tie 0; p_e = (3·4 + 3·4 + 2·0)/64 = 24/64 = 3/8; κ = (1/2 − 3/8) / (1 − 3/8) = 1/5.
Excluding ties: the human's ties 4 and 7 drop; on 1, 2, 3, 5, 6, 8 it says A A A B B B and the
human A A B B A B: agrees on 1, 2, 5, 8 → 4/6.
Position-only baseline (A always): agrees where the human said A (1, 2, 6) → 3/8; κ = 0 (one
class only: p_e = 3/8 · 1 = p_o). Excluding ties: 6 items, agrees on 1, 2, 6 → 3/6 = 1/2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, Preference

HUMAN = ["A", "A", "B", "tie", "B", "A", "tie", "B"]
JUDGE = ["A", "B", "B", "tie", "inconsistent", "A", "A", "tie"]
# the verdict of each order (B-A mapped back to A/B labels of the A-B order) behind each verdict
ORDERS = {"A": ("A", "B"), "B": ("B", "A"), "tie": ("tie", "tie"), "inconsistent": ("A", "A")}


def _files(tmp_path: Path) -> tuple[Path, Path]:
    human, judge = tmp_path / "human.jsonl", tmp_path / "judge.jsonl"
    hrows, jrows = [], []
    for k, (h, v) in enumerate(zip(HUMAN, JUDGE, strict=True), 1):
        long, short = "a longer reply, with more words in it", "short"
        text_a, text_b = (long, short) if k <= 4 else (short, long)
        cid = f"c{k}"
        item = f"{cid}:1:pairwise:general:0"
        hrows.append(
            Preference(
                item_id=item,
                option_a="original",
                option_b="human_edited",
                text_a=text_a,
                text_b=text_b,
                winner=h,  # type: ignore[arg-type]
                cluster=cid,
                metadata={"conversation_id": cid, "turn": 1},
            )
        )
        ab, ba = ORDERS[v]
        jrows.append(
            Judgment(
                item_id=item,
                judge_id="pairjudge",
                conversation_id=cid,
                candidate_model="original",
                verdict=v,
                details={"order_ab": ab, "order_ba": ba},
            )
        )
    human.write_text("".join(r.model_dump_json() + "\n" for r in hrows), encoding="utf-8")
    judge.write_text("".join(r.model_dump_json() + "\n" for r in jrows), encoding="utf-8")
    return human, judge


def test_pairwise_calibrate_with_ties_matches_the_hand_computation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    human, judge = _files(tmp_path)
    argv = ["calibrate", "--human", str(human), "--judge", str(judge), "--json", "--B", "200"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "-o", str(tmp_path / "cal")])
    assert stop.value.code in (0, None)
    data = json.loads(capsys.readouterr().out)
    rows = {r["rater"]: r for r in data["comparison"]["rows"]}
    judge_row = rows["judge"]
    assert judge_row["n_compared"] == 8
    assert judge_row["three_class"]["estimate"] == pytest.approx(4 / 8)
    assert judge_row["kappa"]["estimate"] == pytest.approx(11 / 43)
    assert judge_row["excluding_ties"]["estimate"] == pytest.approx(3 / 4)
    assert judge_row["n_excluding_ties"] == 4
    length = rows["length-only"]
    assert length["three_class"]["estimate"] == pytest.approx(4 / 8)
    assert length["kappa"]["estimate"] == pytest.approx(1 / 5)
    assert length["excluding_ties"]["estimate"] == pytest.approx(4 / 6)
    assert length["n_excluding_ties"] == 6
    position = rows["position-only"]
    assert position["three_class"]["estimate"] == pytest.approx(3 / 8)
    assert position["kappa"]["estimate"] == pytest.approx(0.0)
    assert position["excluding_ties"]["estimate"] == pytest.approx(3 / 6)
    # every estimate has a cluster-bootstrap interval around it (over the conversations it
    # is computed on: all 8, or those left once ties are excluded)
    for row in (judge_row, length, position):
        for key, n in (("three_class", 8), ("excluding_ties", row["n_excluding_ties"])):
            m = row[key]
            assert m["lower"] <= m["estimate"] <= m["upper"]
            assert m["n_clusters"] == n
    report = (tmp_path / "cal" / "report.md").read_text(encoding="utf-8")
    assert f"{11 / 43:.3f}" in report
    # both orders: only item 5 flips → 1/8; decisive calls (own labels) A,B | B,A | B,A | A,A |
    # A,B | A,B on items 1, 2, 3, 5, 6, 7: first position (A) wins 7 of 12
    bias = data["position_bias"]
    assert bias["flip_rate"]["estimate"] == pytest.approx(1 / 8)
    assert bias["first_position_win_rate"]["estimate"] == pytest.approx(7 / 12)
