"""One plain calibration part of a report: metrics, rater heatmap, confusion, curve.

Shared by the ``calibration`` sections of a summary and by the calibration report's
per-dimension sections (it sits below both, so neither imports the other).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attune_judge.report._agreement import (
    agreement_section,
    calibration_curve_section,
    confusion_section,
    metrics_table,
)
from attune_judge.report._blocks import KeyValues, Section
from attune_judge.report._format import fmt_int

__all__ = ["calibration_part"]


def calibration_part(prefix: str, part: Mapping[str, Any], key: str) -> list[Section]:
    """Sections of one plain calibration part (metrics, heatmap, confusion, curve)."""
    out: list[Section] = []
    head = Section(f"{prefix}Metrics")
    if part.get("join"):
        j = part["join"]
        head.blocks.append(
            KeyValues(
                [
                    ("matched items", fmt_int(j.get("matched"))),
                    (f"only in {j.get('left_name', 'left')}", fmt_int(j.get("left_only"))),
                    (f"only in {j.get('right_name', 'right')}", fmt_int(j.get("right_only"))),
                ]
            )
        )
    if part.get("metrics"):
        head.blocks.append(metrics_table(part["metrics"]))
    if head.blocks:
        out.append(head)
    am = part.get("agreement_matrix")
    if am:
        out.append(
            agreement_section(
                am["raters"],
                am["matrix"],
                metric=am.get("metric", "agreement"),
                judges=am.get("judges", ()),
                ceiling=am.get("ceiling"),
                title=f"{prefix}Agreement between raters",
                key=key,
            )
        )
    cm = part.get("confusion")
    if cm:
        out.append(
            confusion_section(
                cm["categories"],
                cm["counts"],
                title=f"{prefix}Judge vs human labels",
                key=key,
                human_label=cm.get("human_label", "human label"),
                judge_label=cm.get("judge_label", "judge label"),
            )
        )
    cc = part.get("calibration_curve")
    if cc:
        out.append(
            calibration_curve_section(
                cc["judge_scores"],
                cc["human_means"],
                cc["counts"],
                lower=cc.get("lower"),
                upper=cc.get("upper"),
                identity=bool(cc.get("identity", False)),
                title=f"{prefix}Calibration",
                key=key,
            )
        )
    return out
