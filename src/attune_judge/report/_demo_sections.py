"""Sections for the demo: recorded judges (``summary["recorded_judges"]``) — recorded LLM
judges and the crowd against expert raters, per dimension, with leave-one-out ceilings and the
alternative annotator test — and DUO (``summary["duo"]``): participants vs outside observers
and the model / style comparisons.

Each row (a :class:`~attune_judge.runs.JudgeRow`) holds ``source``, ``dimension``, ``judge``,
``n``, ``kappa_qw`` and ``spearman`` (Metrics), ``kappa_ceiling_humans`` /
``kappa_ceiling_judge`` (leave-one-out quadratic κ of the experts and of the judge against the
same expert medians), ``alt_test_winning_rate`` and ``alt_test_passed``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.calibration import Metric
from attune_judge.report._blocks import Figure, Section, Table
from attune_judge.report._calibration import calibration_report_sections
from attune_judge.report._fig_matrices import value_heatmap
from attune_judge.report._fig_scores import forest_plot
from attune_judge.report._format import MISSING, fmt_interval, fmt_num, fmt_pct, to_float
from attune_judge.report._rundata import RunData
from attune_judge.runs import DuoResult, JudgeRow

__all__ = [
    "duo_section",
    "duo_sections",
    "recorded_judges_section",
    "recorded_judges_sections",
]


def _mean(xs: Sequence[Any]) -> float | None:
    vals = [v for x in xs if (v := to_float(x)) is not None]
    return math.fsum(vals) / len(vals) if vals else None


def _est(metric: Metric | None) -> float | None:
    return to_float(metric.estimate) if metric is not None else None


def recorded_judges_section(
    rows: Sequence[JudgeRow], *, title: str = "Recorded judges vs experts"
) -> Section:
    """Per-judge summary, a dimensions × judges heatmap of κ_qw, and the full table."""
    judges = sorted({r.judge for r in rows})
    dims = list(dict.fromkeys(r.dimension for r in rows))
    section = Section(title)
    ceiling = _mean([r.kappa_ceiling_humans for r in rows])
    summary_rows = []
    for j in judges:
        mine = [r for r in rows if r.judge == j]
        passed = sum(1 for r in mine if r.alt_test_passed)
        summary_rows.append(
            [
                j,
                str(len(mine)),
                fmt_num(_mean([_est(r.kappa_qw) for r in mine]), 2),
                fmt_num(_mean([r.kappa_ceiling_judge for r in mine]), 2),
                fmt_num(_mean([r.kappa_ceiling_humans for r in mine]), 2),
                f"{passed}/{len(mine)}",
            ]
        )
    section.blocks.append(
        Table(
            [
                "judge",
                "dimensions",
                "mean κ_qw vs expert median",
                "judge leave-one-out κ",
                "expert ceiling κ",
                "alt-test passed",
            ],
            summary_rows,
            "lrrrrr",
            caption="Quadratic-weighted κ against the experts' median, averaged over dimensions; "
            "leave-one-out: each expert (or the judge) against the median of the other experts.",
        )
    )
    by = {(r.dimension, r.judge): _est(r.kappa_qw) for r in rows}
    if dims and judges:
        section.blocks.append(
            Figure(
                "recorded-judges-kappa",
                value_heatmap(
                    dims,
                    judges,
                    [[by.get((d, j)) for j in judges] for d in dims],
                    metric="quadratic-weighted κ",
                    title="Judges vs the experts' median, per dimension",
                    ceiling=ceiling,
                ),
                alt=f"Heatmap of κ_qw for {len(judges)} judges on {len(dims)} dimensions.",
                caption="Each cell: one judge's quadratic-weighted κ with the experts' median on "
                "one dimension; the line on the colour bar is the mean expert ceiling.",
            )
        )
    full = []
    for r in rows:
        k = r.kappa_qw or Metric(name="", estimate=None)
        verdict = r.alt_test_passed
        full.append(
            [
                r.dimension,
                r.judge,
                str(r.n),
                fmt_num(k.estimate, 2),
                fmt_interval(k.lower, k.upper, 2),
                fmt_num(r.kappa_ceiling_judge, 2),
                fmt_num(r.kappa_ceiling_humans, 2),
                fmt_pct(r.alt_test_winning_rate, 0),
                MISSING if verdict is None else ("yes" if verdict else "no"),
            ]
        )
    section.subsections.append(
        Section(
            "Per dimension",
            [
                Table(
                    [
                        "dimension",
                        "judge",
                        "n",
                        "κ_qw",
                        "95% interval",
                        "judge LOO",
                        "expert LOO",
                        "alt-test ω",
                        "passed",
                    ],
                    full,
                    "llrrrrrrc",
                    caption="LOO: leave-one-out κ_qw against the median of the other experts "
                    "(expert LOO is the human ceiling of the dimension); ω: the alternative "
                    "annotator test's winning rate.",
                )
            ],
        )
    )
    return section


def recorded_judges_sections(run: RunData) -> list[Section]:
    """The demo's recorded-judges section from its ``recorded_judges``."""
    rows = getattr(run.record, "recorded_judges", None)
    return [recorded_judges_section(rows)] if rows else []


def _metric_rows(label: Sequence[str], metrics: Mapping[str, Metric]) -> list[list[str]]:
    return [
        [*label, name, fmt_num(m.estimate, 2), fmt_interval(m.lower, m.upper, 2)]
        for name, m in metrics.items()
    ]


def duo_section(duo: DuoResult) -> Section:
    """DUO: participants' own ratings against outside observers, and the model / style
    comparisons of the participants' ratings (means and differences with intervals)."""
    section = Section(f"DUO: observers vs participants ({duo.language})")
    if duo.observer_agreement:
        sub = Section("Participant (as the 'judge') vs the observers' median")
        sub.subsections = calibration_report_sections(duo.observer_agreement)
        section.subsections.append(sub)
    if duo.comparisons:
        means, diffs = [], []
        labels, est, lo, hi = [], [], [], []
        for c in duo.comparisons:
            key = [c.dimension, c.factor, c.cluster_by]
            means += _metric_rows(key, c.means)
            diffs += _metric_rows(key, c.differences)
            for name, m in c.differences.items():
                labels.append(f"{c.dimension} · {name} (by {c.cluster_by})")
                est.append(m.estimate)
                lo.append(m.lower)
                hi.append(m.upper)
        cols = ["dimension", "factor", "clustered by"]
        blocks: list[Any] = [
            Table([*cols, "difference", "estimate", "95% interval"], diffs, "llllrr"),
        ]
        if labels:
            blocks.append(
                Figure(
                    "duo-differences",
                    forest_plot(
                        labels,
                        est,
                        lo,
                        hi,
                        title="Differences in participants' ratings",
                        xlabel="difference of mean ratings (0 = no difference)",
                        reference=0.0,
                        reference_label="no difference",
                    ),
                    alt=f"Forest plot of {len(labels)} rating differences with intervals.",
                    caption="An interval that excludes 0 is a difference the data support; the "
                    "clustering unit changes the width.",
                )
            )
        blocks.append(Table([*cols, "group", "mean", "95% interval"], means, "llllrr"))
        section.subsections.append(Section("Model and style differences", blocks))
    return section


def duo_sections(run: RunData) -> list[Section]:
    """The demo's DUO section from ``summary["duo"]``."""
    duo = getattr(run.record, "duo", None)
    return [duo_section(duo)] if isinstance(duo, DuoResult) else []
