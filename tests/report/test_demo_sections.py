"""The demo's recorded judges (``summary["recorded_judges"]``) as a report section.

Two judges on two dimensions (hand-made rows):

    dimension  judge  κ_qw   judge LOO  expert LOO  alt-test
    empathy    gpt    0.20   0.25       0.60        passed
    empathy    crowd  0.10   0.15       0.60        not passed
    fluency    gpt    0.40   0.45       0.40        not passed
    fluency    crowd  None   None       0.40        None

Per judge, by hand: gpt mean κ (0.2 + 0.4) / 2 = 0.30, LOO (0.25 + 0.45) / 2 = 0.35, expert
ceiling (0.6 + 0.4) / 2 = 0.50, alt-test 1/2; crowd mean κ 0.10 (the undefined one is skipped).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attune_judge.report import recorded_judges_section, write_report
from attune_judge.runs import JudgeRow


def _row(
    dim: str, judge: str, k: float | None, loo: float | None, ceil: float, passed: bool | None
) -> dict[str, Any]:
    return {
        "source": "s",
        "dimension": dim,
        "judge": judge,
        "n": 50,
        "kappa_qw": {
            "name": "cohen_kappa_quadratic",
            "estimate": k,
            "lower": None if k is None else k - 0.1,
            "upper": None if k is None else k + 0.1,
        },
        "kappa_ceiling_judge": loo,
        "kappa_ceiling_humans": ceil,
        "alt_test_winning_rate": None if passed is None else (1.0 if passed else 0.0),
        "alt_test_passed": passed,
        # the statistics this test does not read
        "spearman": None,
        "alpha_humans": None,
        "alpha_with_judge": None,
        "spearman_ceiling_humans": None,
        "spearman_ceiling_judge": None,
    }


ROWS = [
    _row("empathy", "gpt", 0.2, 0.25, 0.6, True),
    _row("empathy", "crowd", 0.1, 0.15, 0.6, False),
    _row("fluency", "gpt", 0.4, 0.45, 0.4, False),
    _row("fluency", "crowd", None, None, 0.4, None),
]


def test_summary_rows_average_over_dimensions_by_hand() -> None:
    section = recorded_judges_section([JudgeRow.model_validate(r) for r in ROWS])
    table = section.blocks[0]
    assert table.rows == [  # type: ignore[union-attr]
        ["crowd", "2", "0.10", "0.15", "0.50", "0/2"],
        ["gpt", "2", "0.30", "0.35", "0.50", "1/2"],
    ]
    assert len(section.figures()) == 1
    per_dim = section.subsections[0].blocks[0]
    assert per_dim.rows[3][3:] == ["—", "—", "—", "0.40", "—", "—"]  # type: ignore[union-attr]


def test_demo_summary_is_detected_and_rendered(tmp_path: Path) -> None:
    summary = {"kind": "demo", "parts": ["a"], "B": 200, "seed": 0, "recorded_judges": ROWS}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    md = write_report(tmp_path)[0].read_text("utf-8")
    assert "- **contents**: recorded_judges" in md.splitlines()
    assert "## Recorded judges vs experts" in md
    assert (tmp_path / "figures" / "recorded-judges-kappa.png").exists()


DUO = {
    "language": "en",
    "observer_agreement": None,
    "comparisons": [
        {
            "dimension": "empathy",
            "factor": "style_prompt",
            "cluster_by": "participant",
            "means": {
                "aligned": {"name": "mean", "estimate": 4.5, "lower": 4.2, "upper": 4.8},
                "neutral": {"name": "mean", "estimate": 3.9, "lower": 3.6, "upper": 4.2},
            },
            "differences": {
                "aligned − neutral": {
                    "name": "mean_difference",
                    "estimate": 0.6,
                    "lower": 0.3,
                    "upper": 0.9,
                }
            },
        }
    ],
}


def test_duo_comparisons_become_tables_and_a_forest_plot(tmp_path: Path) -> None:
    summary = {"kind": "demo", "parts": ["a", "b"], "B": 200, "seed": 0}
    summary |= {"recorded_judges": ROWS, "duo": DUO}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    md = write_report(tmp_path)[0].read_text("utf-8")
    assert "- **contents**: recorded_judges, duo" in md.splitlines()
    titles = [line for line in md.splitlines() if line.startswith("## ")]
    assert titles.index("## Recorded judges vs experts") < titles.index(
        "## DUO: observers vs participants (en)"
    )
    assert "## DUO: observers vs participants (en)" in md
    assert (
        "| empathy | style_prompt | participant | aligned − neutral | 0.60 | [0.30, 0.90] |" in md
    )
    assert "| empathy | style_prompt | participant | neutral | 3.90 | [3.60, 4.20] |" in md
    assert (tmp_path / "figures" / "duo-differences.png").exists()
