"""One plain calibration part of a report: metrics, rater heatmap, confusion, curve.

Shared by the ``calibration`` sections of a summary and by the calibration report's
per-dimension sections (it sits below both, so neither imports the other).
"""

from __future__ import annotations

from collections.abc import Sequence

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import BinaryAgreement
from attune_judge.report._agreement import (
    agreement_section,
    calibration_curve_section,
    confusion_section,
    metrics_table,
)
from attune_judge.report._blocks import KeyValues, Paragraph, Section, Table
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num
from attune_judge.runs import CalibrationPart

__all__ = ["WORST_ITEMS", "binary_table", "calibration_part"]

WORST_ITEMS = 10
"""Items listed per dimension where the judge and the people differ most."""

_BINARY_COLUMNS = ("TPR", "TNR", "precision", "NPV", "balanced accuracy", "leniency")


def binary_table(groups: Sequence[BinaryAgreement]) -> Table:
    """One row per scope: the pass/fail figures with intervals, the confusion counts, n."""
    rows = []
    for g in groups:
        cells = [
            f"{fmt_num(m.estimate)} {fmt_interval(m.lower, m.upper)}"
            if m.estimate is not None
            else "undefined"
            for m in g.metrics().values()
        ]
        rows.append(
            [
                g.name,
                *cells,
                f"{g.tp} / {g.fp} / {g.fn} / {g.tn}",
                fmt_int(g.n),
                fmt_int(g.n_clusters),
            ]
        )
    level = groups[0].tpr.level if groups else DEFAULT_LEVEL
    return Table(
        ["scope", *_BINARY_COLUMNS, "TP / FP / FN / TN", "n", "clusters"],
        rows,
        "l" + "r" * (len(_BINARY_COLUMNS) + 3),
        caption=f"Pass = yes / 1. Estimates with {level:.0%} cluster-bootstrap intervals "
        "(conversations resampled). Leniency = the judge's pass rate − people's (> 0: too "
        "lenient, < 0: too strict).",
    )


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
    if part.binary:
        sec = Section(f"{prefix}The judge as a pass/fail classifier")
        sec.blocks.append(binary_table(part.binary))
        out.append(sec)
    if part.disagreements:
        worst = Section(f"{prefix}Largest disagreements")
        worst.blocks.append(
            Table(
                ["item", "judge", "people", "|judge − people|"],
                [
                    [d.item_id, fmt_num(d.judge, 2), fmt_num(d.humans, 2), fmt_num(d.difference, 2)]
                    for d in part.disagreements
                ],
                align="lrrr",
            )
        )
        worst.blocks.append(
            Paragraph(
                "The items where the judge is furthest from the people's aggregate, largest "
                "first. `attune-judge view RUN --human LABELS` opens each one (conversation, "
                "the judge's answer and rationale, each person's label)."
            )
        )
        out.append(worst)
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
