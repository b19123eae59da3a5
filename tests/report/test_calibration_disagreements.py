"""calibrate's report lists, per dimension, the items where the judge is furthest from the
people's median (issue 46), worked out here by hand from the ratings."""

from __future__ import annotations

import statistics
from pathlib import Path

from attune_judge.data import Rating, write_jsonl
from attune_judge.report import calibration_figure_data


def _ratings() -> tuple[list[Rating], list[Rating]]:
    human, judge = [], []
    for i in range(14):
        item = f"c{i}:1:m"
        values = [1 + (i + k) % 5 for k in range(3)]  # three people
        for k, v in enumerate(values):
            human.append(
                Rating(
                    item_id=item,
                    rater=f"p{k}",
                    dimension="empathy",
                    value=float(v),
                    cluster=f"c{i}",
                )
            )
        judge.append(
            Rating(
                item_id=item,
                rater="judge",
                dimension="empathy",
                value=float(1 + (3 * i) % 5),
                cluster=f"c{i}",
            )
        )
    return human, judge


def test_the_largest_disagreements_are_listed_largest_first() -> None:
    human, judge = _ratings()
    medians = {}
    for r in human:
        medians.setdefault(r.item_id, []).append(float(r.value))  # type: ignore[arg-type]
    jv = {r.item_id: float(r.value) for r in judge}  # type: ignore[arg-type]
    gaps = sorted(
        (
            (abs(jv[i] - statistics.median(v)), i)
            for i, v in medians.items()
            if jv[i] != statistics.median(v)
        ),
        key=lambda t: (-t[0], t[1]),
    )
    part = calibration_figure_data(human, judge)["empathy"]
    assert part.disagreements is not None
    assert [(d.difference, d.item_id) for d in part.disagreements] == gaps[:10]  # the 10 furthest
    assert all(d.humans == statistics.median(medians[d.item_id]) for d in part.disagreements)


def test_calibrates_report_shows_them(tmp_path: Path) -> None:
    from attune_judge.validate import calibrate_files

    human, judge = _ratings()
    write_jsonl(tmp_path / "h.jsonl", human)
    write_jsonl(tmp_path / "j.jsonl", judge)
    outcome = calibrate_files(
        tmp_path / "h.jsonl", tmp_path / "j.jsonl", B=50, out=tmp_path / "out"
    )
    assert outcome.report_files is not None
    md = outcome.report_files[0].read_text("utf-8")
    part = calibration_figure_data(human, judge)["empathy"]
    assert "Largest disagreements" in md
    assert f"| {part.disagreements[0].item_id} |" in md  # type: ignore[index]
