"""Sections about a judge against people: metric table, agreement heatmap, confusion matrix,
calibration plot.

Each builder takes plain data (lists, nested lists, dicts, or calibration ``Metric`` models /
their dumps), so any command can assemble them from its own results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import Metric, fmt_metric
from attune_judge.report._blocks import Figure, Note, Section, Table, slugify
from attune_judge.report._fig_matrices import (
    agreement_heatmap,
    calibration_plot,
    confusion_matrix_plot,
)
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num, to_float
from attune_judge.runs import FittedCheck

__all__ = [
    "agreement_section",
    "calibration_curve_section",
    "confusion_section",
    "fitted_check_section",
    "metrics_table",
]


def metrics_table(metrics: Mapping[str, Metric], *, caption: str | None = None) -> Table:
    """A table of statistics with intervals, one row per ``label → Metric``."""
    rows = []
    notes = any(m.undefined_reason or m.note for m in metrics.values())
    for label, m in metrics.items():
        rows.append(
            [
                label,
                fmt_num(m.estimate) if m.estimate is not None else "undefined",
                fmt_interval(m.lower, m.upper),
                fmt_int(m.n),
                fmt_int(m.n_clusters),
                m.method,
                *([m.undefined_reason or m.note or ""] if notes else []),
            ]
        )
    level = next((m.level for m in metrics.values() if m.level), DEFAULT_LEVEL)
    cols = ["statistic", "estimate", f"{level * 100:g}% interval", "n", "clusters", "method"]
    return Table(cols + (["note"] if notes else []), rows, "lrrrrll", caption=caption)


def agreement_section(
    raters: Sequence[str],
    matrix: Sequence[Sequence[float | None]],
    *,
    metric: str = "Cohen's κ (quadratic)",
    judges: Sequence[str] = (),
    ceiling: float | None = None,
    title: str = "Agreement with people",
    key: str = "agreement",
) -> Section:
    """Raters × raters agreement heatmap (judges outlined, human ceiling marked).

    Parameters
    ----------
    raters, matrix
        Labels and the square matrix of pairwise agreement (``None`` = not measured).
    metric
        Name of the pairwise statistic.
    judges
        Which raters are judges (outlined).
    ceiling
        Human ceiling (mean leave-one-out agreement of a human with the other humans).
    """
    section = Section(title)
    c = to_float(ceiling)
    if c is not None:
        section.blocks.append(
            Note(
                f"Human ceiling ({metric}): {fmt_num(c)}. A judge cannot be expected to agree with "
                "people more than people agree with each other."
            )
        )
    if len(raters) >= 2:
        section.blocks.append(
            Figure(
                f"{slugify(key)}-heatmap",
                agreement_heatmap(
                    raters,
                    matrix,
                    metric=metric,
                    highlight=judges,
                    ceiling=c,
                    title=f"Pairwise {metric}",
                ),
                alt=f"Heatmap of pairwise {metric} between {len(raters)} raters.",
                caption="Each cell is the agreement of the row rater with the column rater; judges "
                "are outlined; the line on the colour bar is the human ceiling.",
            )
        )
    return section


def confusion_section(
    categories: Sequence[str],
    counts: Sequence[Sequence[int]],
    *,
    title: str = "Judge vs human labels",
    key: str = "confusion",
    human_label: str = "human label",
    judge_label: str = "judge label",
) -> Section:
    """Confusion matrix (rows = human label, columns = judge label) as a figure and a table."""
    section = Section(title)
    cats = [str(c) for c in categories]
    rows = [
        [c, *(fmt_int(v) for v in r), fmt_int(sum(int(v) for v in r))]
        for c, r in zip(cats, counts, strict=True)
    ]
    col_tot = [sum(int(r[j]) for r in counts) for j in range(len(cats))]
    rows.append(["total", *(fmt_int(v) for v in col_tot), fmt_int(sum(col_tot))])
    section.blocks.append(
        Table(
            [f"{human_label} \\ {judge_label}", *cats, "total"],
            rows,
            "l" + "r" * (len(cats) + 1),
            caption="Rows: what people said; columns: what the judge said; diagonal = agreement.",
        )
    )
    section.blocks.append(
        Figure(
            f"{slugify(key)}-confusion",
            confusion_matrix_plot(
                cats, counts, row_label=human_label, col_label=judge_label, title=title
            ),
            alt=f"Confusion matrix of {judge_label} against {human_label}.",
            caption="Cell text: count and share of the row; colour: share of the row.",
        )
    )
    return section


def calibration_curve_section(
    judge_scores: Sequence[float],
    human_means: Sequence[float | None],
    counts: Sequence[int],
    *,
    lower: Sequence[float | None] | None = None,
    upper: Sequence[float | None] | None = None,
    identity: bool = False,
    title: str = "Calibration",
    key: str = "calibration",
    judge_label: str = "judge score",
    human_label: str = "mean human score",
) -> Section:
    """Calibration plot and table: the mean human score at each judge score level."""
    section = Section(title)
    rows = [
        [fmt_num(x, 2), fmt_num(y), fmt_interval(lo, hi), fmt_int(n)]
        for x, y, lo, hi, n in zip(
            judge_scores,
            human_means,
            lower if lower is not None else [None] * len(judge_scores),
            upper if upper is not None else [None] * len(judge_scores),
            counts,
            strict=True,
        )
    ]
    section.blocks.append(Table([judge_label, human_label, "95% interval", "items"], rows, "rrrr"))
    section.blocks.append(
        Figure(
            f"{slugify(key)}-calibration",
            calibration_plot(
                judge_scores,
                human_means,
                counts,
                lower=lower,
                upper=upper,
                identity=identity,
                title=f"{title}: {judge_label} vs {human_label}",
                xlabel=judge_label,
                ylabel=human_label,
            ),
            alt=f"Calibration plot of {human_label} against {judge_label}.",
            caption="A well-calibrated judge's points rise steadily; a flat curve means the "
            "judge's score says little about what people thought.",
        )
    )
    return section


def fitted_check_section(check: FittedCheck) -> Section | None:
    """The held-out-only section of a judge (an aligned or calibrated one) fitted on some of
    the labels it is compared with (``calibrate``, ``validate``): its headline statistics on
    the held-out items beside all items, or why there are none; ``None`` when the check was
    skipped. The caller shows ``check.message`` (the warning) at the top of its section."""
    if check.status == "skipped":
        return None
    section = Section("Held-out items only")
    n_all = check.n_items or 0
    n_held = n_all - (check.n_fitted or 0)
    if not check.held_out:
        section.blocks.append(Note(f"No held-out figure: {check.held_out_note}.", "warning"))
        return section
    section.blocks.append(
        Table(
            ["dimension", "judge", "statistic", f"all {n_all} items", f"{n_held} held-out items"],
            [
                [r.dimension, r.judge, r.metric, fmt_metric(r.overall), fmt_metric(r.held_out)]
                for r in check.held_out
            ],
            "lllrr",
            caption=f"The judge on the {n_held} items ({check.n_held_out_conversations} "
            "conversations) it was not fitted on, beside every item compared; intervals are "
            "cluster-bootstrap intervals recomputed on those items.",
        )
    )
    if check.held_out_note:
        section.blocks.append(Note(f"Held out only: {check.held_out_note}.", "warning"))
    return section
