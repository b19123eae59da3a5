"""A calibration ``CalibrationReport`` and raw ratings rendered as report sections.

Three humans and one judge rate six items (one conversation each) on 1–5:

    item  h1 h2 h3  median  judge
    i1     1  1  2    1       1
    i2     2  2  2    2       2
    i3     3  2  3    3       2
    i4     4  4  5    4       3
    i5     5  5  5    5       4
    i6     4  5  5    5       4

Confusion (rows = human median, columns = judge, categories 1..5), by hand:
    1: [1 0 0 0 0]   2: [0 1 0 0 0]   3: [0 1 0 0 0]   4: [0 0 1 0 0]   5: [0 0 0 2 0]
Calibration curve (mean human median per judge value): 1 → 1, 2 → (2+3)/2 = 2.5, 3 → 4,
4 → (5+5)/2 = 5, with counts 1, 2, 1, 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from attune_judge import calibration as cal
from attune_judge.data import Rating
from attune_judge.report import (
    calibration_figure_data,
    calibration_report_sections,
    write_calibration_run,
    write_report,
)

HUMANS = {
    "h1": [1, 2, 3, 4, 5, 4],
    "h2": [1, 2, 2, 4, 5, 5],
    "h3": [2, 2, 3, 5, 5, 5],
}
JUDGE = [1, 2, 2, 3, 4, 4]


def _ratings() -> tuple[list[Rating], list[Rating]]:
    def r(rater: str, group: str, i: int, v: float) -> Rating:
        return Rating(
            item_id=f"i{i + 1}",
            rater=rater,
            rater_group=group,
            dimension="empathy",
            value=float(v),
            cluster=f"c{i + 1}",
        )

    human = [r(h, "experts", i, v) for h, vals in HUMANS.items() for i, v in enumerate(vals)]
    judge = [r("judge", "llm", i, v) for i, v in enumerate(JUDGE)]
    return human, judge


def test_figure_data_counts_and_means_match_the_hand_computation() -> None:
    human, judge = _ratings()
    data = calibration_figure_data(human, judge)
    assert list(data) == ["empathy"]
    d = data["empathy"]
    assert d.confusion is not None
    assert d.confusion.categories == ["1", "2", "3", "4", "5"]
    assert d.confusion.counts == [
        [1, 0, 0, 0, 0],
        [0, 1, 0, 0, 0],
        [0, 1, 0, 0, 0],
        [0, 0, 1, 0, 0],
        [0, 0, 0, 2, 0],
    ]
    curve = d.calibration_curve
    assert curve is not None
    assert curve.judge_scores == [1.0, 2.0, 3.0, 4.0]
    assert curve.human_means == pytest.approx([1.0, 2.5, 4.0, 5.0])
    assert curve.counts == [1, 2, 1, 2]
    assert curve.identity is True
    am = d.agreement_matrix
    assert am is not None
    assert am.raters == ["h1", "h2", "h3", "judge"] and am.judges == ["judge"]
    assert am.matrix[0][0] is None
    # Spearman of h1 with the judge, by scipy (an independent implementation)
    expected = stats.spearmanr(HUMANS["h1"], JUDGE).statistic
    assert am.matrix[0][3] == pytest.approx(expected)
    assert am.matrix[3][0] == pytest.approx(expected)


def test_calibration_report_renders_per_dimension_with_figures(tmp_path: Path) -> None:
    human, judge = _ratings()
    report = cal.calibrate(human, judge, B=50, seed=0)
    figures = calibration_figure_data(human, judge)
    (section,) = calibration_report_sections(report, figures=figures)
    assert section.title == "Dimension: empathy"
    assert [s.title for s in section.subsections] == [
        "judge vs humans",
        "Human ceiling: judge",
        "Agreement between raters",
        "Judge vs human labels",
        "Largest disagreements",
        "Calibration",
    ]
    # ceiling figure, heatmap, confusion matrix, calibration plot
    assert len(section.figures()) == 4
    summary = {
        "kind": "calibration",
        "calibration": {
            "report": report.model_dump(mode="json"),
            "figures": {k: v.model_dump(mode="json") for k, v in figures.items()},
        },
    }
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    md = write_report(tmp_path)[0].read_text("utf-8")
    assert "## Agreement with people" in md and "### Dimension: empathy" in md
    assert "| humans (median) \\ judge | 1 | 2 | 3 | 4 | 5 | total |" in md
    assert "| 2.00 | 2.500 | — | 2 |" in md  # calibration table row for judge score 2


def test_write_calibration_run_makes_a_run_directory_the_report_command_reads(
    tmp_path: Path,
) -> None:
    human, judge = _ratings()
    report = cal.calibrate(human, judge, B=50, seed=0)
    md_path, html_path = write_calibration_run(tmp_path / "cal", report, human=human, judge=judge)
    summary = json.loads((tmp_path / "cal" / "summary.json").read_text())
    assert summary["kind"] == "calibration"
    assert summary["calibration"]["figures"]["empathy"]["confusion"]["counts"][4] == [0, 0, 0, 2, 0]
    assert md_path.read_text("utf-8").startswith("# attune-judge calibration report")
    assert html_path.exists()
