"""Sections for the demo: recorded judges (``summary["recorded_judges"]``) — recorded LLM
judges and the crowd against expert raters, per dimension, with leave-one-out ceilings and the
alternative annotator test — and DUO (``summary["duo"]``): participants vs outside observers
and the model / style comparisons.

Each row (a ``JudgeRow`` dump) holds ``source``, ``dimension``, ``judge``, ``n``, ``kappa_qw``
and ``spearman`` (Metrics), ``kappa_ceiling_humans`` / ``kappa_ceiling_judge`` (leave-one-out
quadratic κ of the experts and of the judge against the same expert medians),
``alt_test_winning_rate`` and ``alt_test_passed``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.report._blocks import Figure, Section, Table
from attune_judge.report._fig_matrices import value_heatmap
from attune_judge.report._fig_scores import forest_plot
from attune_judge.report._format import MISSING, fmt_interval, fmt_num, fmt_pct, to_float
from attune_judge.report._rundata import RunData

__all__ = [
    "duo_section",
    "duo_sections",
    "recorded_judges_section",
    "recorded_judges_sections",
]


def _mean(xs: Sequence[Any]) -> float | None:
    vals = [v for x in xs if (v := to_float(x)) is not None]
    return math.fsum(vals) / len(vals) if vals else None


def _est(metric: Any) -> float | None:
    return to_float(metric.get("estimate")) if isinstance(metric, Mapping) else None


def recorded_judges_section(
    rows: Sequence[Mapping[str, Any]], *, title: str = "Recorded judges vs experts"
) -> Section:
    """Per-judge summary, a dimensions × judges heatmap of κ_qw, and the full table."""
    rows = [r.model_dump(mode="json") if hasattr(r, "model_dump") else r for r in rows]
    judges = sorted({str(r.get("judge")) for r in rows})
    dims = list(dict.fromkeys(str(r.get("dimension")) for r in rows))
    section = Section(title)
    ceiling = _mean([r.get("kappa_ceiling_humans") for r in rows])
    summary_rows = []
    for j in judges:
        mine = [r for r in rows if r.get("judge") == j]
        passed = sum(1 for r in mine if r.get("alt_test_passed"))
        summary_rows.append(
            [
                j,
                str(len(mine)),
                fmt_num(_mean([_est(r.get("kappa_qw")) for r in mine]), 2),
                fmt_num(_mean([r.get("kappa_ceiling_judge") for r in mine]), 2),
                fmt_num(_mean([r.get("kappa_ceiling_humans") for r in mine]), 2),
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
    by = {(str(r.get("dimension")), str(r.get("judge"))): _est(r.get("kappa_qw")) for r in rows}
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
        k = r.get("kappa_qw") or {}
        verdict = r.get("alt_test_passed")
        full.append(
            [
                str(r.get("dimension")),
                str(r.get("judge")),
                str(r.get("n", MISSING)),
                fmt_num(k.get("estimate"), 2),
                fmt_interval(k.get("lower"), k.get("upper"), 2),
                fmt_num(r.get("kappa_ceiling_judge"), 2),
                fmt_num(r.get("kappa_ceiling_humans"), 2),
                fmt_pct(r.get("alt_test_winning_rate"), 0),
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
    """The demo's recorded-judges section from ``summary["recorded_judges"]``."""
    rows = run.summary.get("recorded_judges") or []
    return [recorded_judges_section(rows)] if rows else []


def _metric_rows(label: Sequence[str], metrics: Mapping[str, Any]) -> list[list[str]]:
    return [
        [
            *label,
            str(name),
            fmt_num(m.get("estimate"), 2),
            fmt_interval(m.get("lower"), m.get("upper"), 2),
        ]
        for name, m in metrics.items()
        if isinstance(m, Mapping)
    ]


def duo_section(duo: Mapping[str, Any]) -> Section:
    """DUO: participants' own ratings against outside observers, and the model / style
    comparisons of the participants' ratings (means and differences with intervals)."""
    from attune_judge.report._calibration import calibration_report_sections

    lang = duo.get("language", "?")
    section = Section(f"DUO: observers vs participants ({lang})")
    if duo.get("observer_agreement"):
        sub = Section("Participant (as the 'judge') vs the observers' median")
        sub.subsections = calibration_report_sections(duo["observer_agreement"])
        section.subsections.append(sub)
    comps = duo.get("comparisons") or []
    if comps:
        means, diffs = [], []
        labels, est, lo, hi = [], [], [], []
        for c in comps:
            key = [str(c.get("dimension")), str(c.get("factor")), str(c.get("cluster_by"))]
            means += _metric_rows(key, c.get("means") or {})
            diffs += _metric_rows(key, c.get("differences") or {})
            for name, m in (c.get("differences") or {}).items():
                labels.append(f"{c.get('dimension')} · {name} (by {c.get('cluster_by')})")
                est.append(m.get("estimate"))
                lo.append(m.get("lower"))
                hi.append(m.get("upper"))
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
    duo = run.summary.get("duo")
    return [duo_section(duo)] if isinstance(duo, Mapping) and duo else []
