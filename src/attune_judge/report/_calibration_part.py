"""One plain calibration part of a report: metrics, rater heatmap, confusion, curve.

Shared by the ``calibration`` sections of a summary and by the calibration report's
per-dimension sections (it sits below both, so neither imports the other).
"""

from __future__ import annotations

from attune_judge.report._agreement import (
    agreement_section,
    calibration_curve_section,
    confusion_section,
    metrics_table,
)
from attune_judge.report._blocks import KeyValues, Section
from attune_judge.report._format import fmt_int
from attune_judge.runs import CalibrationPart

__all__ = ["calibration_part"]


def calibration_part(prefix: str, part: CalibrationPart, key: str) -> list[Section]:
    """Sections of one calibration part (metrics, heatmap, confusion, curve)."""
    out: list[Section] = []
    head = Section(f"{prefix}Metrics")
    j = part.join
    if j:
        head.blocks.append(
            KeyValues(
                [
                    ("matched items", fmt_int(j.matched)),
                    (f"only in {j.left_name}", fmt_int(j.left_only)),
                    (f"only in {j.right_name}", fmt_int(j.right_only)),
                ]
            )
        )
    if part.metrics:
        head.blocks.append(metrics_table(part.metrics))
    if head.blocks:
        out.append(head)
    am = part.agreement_matrix
    if am:
        out.append(
            agreement_section(
                am.raters,
                am.matrix,
                metric=am.metric,
                judges=am.judges,
                ceiling=am.ceiling,
                title=f"{prefix}Agreement between raters",
                key=key,
            )
        )
    cm = part.confusion
    if cm:
        out.append(
            confusion_section(
                cm.categories,
                cm.counts,
                title=f"{prefix}Judge vs human labels",
                key=key,
                human_label=cm.human_label,
                judge_label=cm.judge_label,
            )
        )
    cc = part.calibration_curve
    if cc:
        out.append(
            calibration_curve_section(
                cc.judge_scores,
                cc.human_means,
                cc.counts,
                lower=cc.lower,
                upper=cc.upper,
                identity=cc.identity,
                title=f"{prefix}Calibration",
                key=key,
            )
        )
    return out
