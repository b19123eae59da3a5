"""``score --rubric attunebench-behaviours`` on AttuneBench data, then ``calibrate`` against the
participants' own behaviour answers, joined on item id and ``B1:observed``: checked by hand."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests._openai_stub import openai_stub
from tests.conftest import SAMPLES
from tests.judging._stub_judges import behaviour_rule, read_jsonl_rows


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _odd(item: str) -> str:
    return "yes" if int(item[1:]) % 2 else "no"


def test_behaviour_judging_joins_the_participants_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    with openai_stub(behaviour_rule) as server:
        argv = ["score", str(SAMPLES), "--rubric", "attunebench-behaviours", "-o", str(run)]
        extra = ["--models", "original", "-q", "--lm", "openai/stub", "--api-base", server.url]
        assert _cli([*argv, *extra]) == 0
    ratings_path = tmp_path / "ratings.jsonl"
    assert _cli(["data", "ratings", str(SAMPLES), "-o", str(ratings_path)]) == 0
    ratings = read_jsonl_rows(ratings_path)
    judgments = {j["item_id"]: j for j in read_jsonl_rows(run / "judgments.jsonl")}
    # each turn was asked exactly its applicable items, and scored under the same names
    applicable = defaultdict(set)
    for r in ratings:
        if r["metadata"]["applicable"]:
            applicable[r["item_id"]].add(r["metadata"]["behaviour_item"])
    for item_id, items in applicable.items():
        assert set(judgments[item_id]["details"]["answers"]) == items
        assert set(judgments[item_id]["scores"]) == {f"{i}:observed" for i in items}

    capsys.readouterr()
    cal = tmp_path / "cal"
    argv = ["calibrate", "--human", str(ratings_path), "--judge", str(run), "--json"]
    assert _cli([*argv, "--B", "200", "-o", str(cal)]) == 0
    data = json.loads(capsys.readouterr().out)

    # by hand: the participants' yes/no "observed" answers on applicable items vs the rule
    pairs: list[tuple[str, str, str, str]] = []  # (item, category, judge, human)
    n_na = 0
    for r in ratings:
        item = r["metadata"]["behaviour_item"]
        if not r["dimension"].endswith(":observed") or item not in applicable[r["item_id"]]:
            continue
        if r["value"] not in ("yes", "no"):
            n_na += 1
            continue
        pairs.append((item, r["metadata"]["category"], _odd(item), r["value"]))
    n = len(pairs)
    agree = sum(j == h for _, _, j, h in pairs) / n
    p_yes_j = sum(j == "yes" for _, _, j, _ in pairs) / n
    p_yes_h = sum(h == "yes" for _, _, _, h in pairs) / n
    p_e = p_yes_j * p_yes_h + (1 - p_yes_j) * (1 - p_yes_h)
    assert data["overall"]["n"] == n
    assert data["n_human_na"] == n_na
    assert data["overall"]["agreement"]["estimate"] == pytest.approx(agree)
    assert data["overall"]["kappa"]["estimate"] == pytest.approx((agree - p_e) / (1 - p_e))
    assert data["overall"]["judge_yes_rate"] == pytest.approx(p_yes_j)
    for group in data["per_category"]:
        rows = [p for p in pairs if p[1] == group["name"]]
        assert group["n"] == len(rows)
        if len(rows) >= 2:
            share = sum(j == h for _, _, j, h in rows) / len(rows)
            assert group["agreement"]["estimate"] == pytest.approx(share)
    b1 = next(g for g in data["per_item"] if g["name"] == "B1")
    b1_rows = [p for p in pairs if p[0] == "B1"]
    assert b1["n"] == len(b1_rows) and b1["judge_yes_rate"] == 1.0
    # the pass/fail figures (yes = pass), by hand from the same pairs
    tp = sum(j == h == "yes" for _, _, j, h in pairs)
    tn = sum(j == h == "no" for _, _, j, h in pairs)
    fp = sum(j == "yes" and h == "no" for _, _, j, h in pairs)
    fn = sum(j == "no" and h == "yes" for _, _, j, h in pairs)
    binary = data["overall"]["binary"]
    assert (binary["tp"], binary["fp"], binary["fn"], binary["tn"]) == (tp, fp, fn, tn)
    assert binary["tpr"]["estimate"] == pytest.approx(tp / (tp + fn))
    assert binary["tnr"]["estimate"] == pytest.approx(tn / (tn + fp))
    assert binary["precision"]["estimate"] == pytest.approx(tp / (tp + fp))
    assert binary["npv"]["estimate"] == pytest.approx(tn / (tn + fn))
    bal = (tp / (tp + fn) + tn / (tn + fp)) / 2
    assert binary["balanced_accuracy"]["estimate"] == pytest.approx(bal)
    assert binary["leniency"]["estimate"] == pytest.approx((tp + fp) / n - (tp + fn) / n)
    assert binary["tpr"]["lower"] <= binary["tpr"]["estimate"] <= binary["tpr"]["upper"]
    # summary.json holds it per scope (typed), beside the confusion counts; report shows it
    from attune_judge.runs import read_summary

    block = read_summary(cal).calibration
    scopes = [b.name for b in block.binary]
    assert scopes[0] == "all items" and "item B1" in scopes
    assert block.confusion.counts == [[tn, fp], [fn, tp]]
    b1_bin = next(b for b in block.binary if b.name == "item B1")
    assert b1_bin.tp + b1_bin.fp == len(b1_rows)  # the rule says yes to every B1
    report = (cal / "report.md").read_text()
    assert "all items: agreement" in report and "item B1: agreement" in report
    assert "The judge as a pass/fail classifier" in report and "balanced accuracy" in report
