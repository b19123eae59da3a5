"""``calibrate --items`` prints the length-only and lexicon baselines beside the judge."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from scipy import stats

from attune_judge import shipped_dir
from attune_judge.cli import main
from attune_judge.data import JudgeItem, Judgment, Rating, read_jsonl, write_jsonl


def test_calibrate_with_items_adds_the_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ratings = [
        r
        for r in read_jsonl(
            shipped_dir("calibration") / "empathic-communication" / "ratings.jsonl", Rating
        )
        if r.metadata.get("source") == "epitome" and r.rater_group == "experts"
    ]
    items = [
        i
        for i in read_jsonl(
            shipped_dir("data") / "empathic-communication" / "items.jsonl", JudgeItem
        )
        if i.metadata.get("source") == "epitome"
    ]
    # a judge that copies expert2's levels on every dimension
    e2 = {(r.item_id, r.dimension): float(r.value) for r in ratings if r.rater == "expert2"}  # type: ignore[arg-type]
    judgments = [
        Judgment(
            item_id=i.item_id,
            judge_id="copy",
            conversation_id=i.conversation_id,
            scores={d: v for (k, d), v in e2.items() if k == i.item_id},
        )
        for i in items
    ]
    write_jsonl(tmp_path / "human.jsonl", ratings)
    write_jsonl(tmp_path / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "items.jsonl", items)
    with pytest.raises(SystemExit) as done:
        main(
            [
                "calibrate",
                "--human", str(tmp_path / "human.jsonl"),
                "--judge", str(tmp_path / "judgments.jsonl"),
                "--items", str(tmp_path / "items.jsonl"),
                "--json", "--B", "200",
            ]
        )  # fmt: skip
    assert done.value.code in (0, None)
    data = json.loads(capsys.readouterr().out)
    dim = data["baselines"]["dimensions"]["level_emotional_reactions"]["agreement"]
    ids = sorted(i.item_id for i in items)
    med = {
        i: statistics.median(
            float(r.value)  # type: ignore[arg-type]
            for r in ratings
            if r.item_id == i and r.dimension == "level_emotional_reactions"
        )
        for i in ids
    }
    by_id = {i.item_id: i for i in items}
    # the length baseline: the reply's length in words (runs of word characters)
    words = [len(re.findall(r"\w+", by_id[i].candidate)) for i in ids]
    assert dim["n"] == len(ids) == 50
    assert dim["spearman"]["length"]["estimate"] == pytest.approx(
        stats.spearmanr(words, [med[i] for i in ids]).statistic
    )
    assert dim["spearman"]["judge"]["estimate"] == pytest.approx(
        stats.spearmanr(
            [e2[(i, "level_emotional_reactions")] for i in ids], [med[i] for i in ids]
        ).statistic
    )


def test_items_need_judgment_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        Rating(item_id=f"i{k}", rater=who, dimension="d", value=float(k % 3), cluster=f"i{k}")
        for k in range(6)
        for who in ("a", "b")
    ]
    write_jsonl(tmp_path / "h.jsonl", [r for r in rows if r.rater == "a"])
    write_jsonl(tmp_path / "j.jsonl", [r for r in rows if r.rater == "b"])
    write_jsonl(tmp_path / "items.jsonl", [])
    with pytest.raises(SystemExit) as done:
        main(
            [
                "calibrate",
                "--human", str(tmp_path / "h.jsonl"),
                "--judge", str(tmp_path / "j.jsonl"),
                "--items", str(tmp_path / "items.jsonl"),
                "--B", "100",
            ]
        )  # fmt: skip
    assert done.value.code == 2
    assert "--items needs the judge's Judgment records" in capsys.readouterr().err
