"""Report sections of a sensitivity analysis that the generic report does not draw:
verdicts with their reasons, score shifts per model and per criterion, the variance method.

Built from the report package's blocks, so they render to Markdown and HTML alike, from the
plain :class:`~attune_judge.calibration.SensitivityAnalysis` that
:func:`attune_judge.sensitivity.run_sensitivity` returns and stores in ``summary.json``. The
report of a sensitivity run draws them from its typed block (``report._study_sections``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_interval, fmt_num, fmt_pct

if TYPE_CHECKING:
    from attune_judge.calibration import SensitivityAnalysis

__all__ = [
    "sensitivity_extra_sections",
]


def sensitivity_extra_sections(analysis: SensitivityAnalysis) -> list[Section]:
    """Sections: verdicts, score shifts, criterion shifts, variance decomposition method.

    The verdict rule itself (``analysis.rule``) is printed by the report package's sensitivity
    section, from ``summary.json``.
    """
    pct = f"{analysis.level:.0%}"
    verdict_rows = [
        [
            v.variant,
            {"unstable": "UNSTABLE"}.get(v.verdict, v.verdict),
            str(v.n_flips),
            str(v.n_significant_flips),
            fmt_num(v.tau),
            fmt_num(v.tau_upper),
            "; ".join(v.reasons) or "—",
        ]
        for v in analysis.verdicts
    ]
    verdicts = Section(
        f"Verdicts at α = {analysis.alpha:g}",
        [
            Table(
                ["variant", "verdict", "flips", "significant flips", "τ", "τ upper", "why"],
                verdict_rows,
                "llrrrrl",
                caption=(
                    f"Pair intervals at level {analysis.pair_level:.4f} "
                    f"({analysis.adjust} over model pairs); τ intervals at {pct}; "
                    f"paired cluster bootstrap, B = {analysis.B}, seed {analysis.seed}, "
                    f"{analysis.n_conversations} conversations."
                ),
            ),
        ],
    )
    shift_rows = []
    for r in analysis.rankings:
        for m in r.models:
            if m.shift is None:
                continue
            shift_rows.append(
                [
                    r.variant,
                    m.model,
                    fmt_num(m.score.estimate),
                    fmt_num(m.shift.estimate),
                    fmt_interval(m.shift.lower, m.shift.upper),
                ]
            )
    shifts = Section(
        "Score shifts per model",
        [
            Table(
                ["variant", "model", "score", "shift vs base", f"{pct} interval"],
                shift_rows,
                "llrrr",
                caption="Normalised [0, 1] scores; shift = variant minus base, paired interval.",
            )
        ],
    )
    sections = [verdicts, shifts]
    if analysis.criterion_shifts:
        crit_rows = [
            [
                c.variant,
                c.criterion,
                fmt_num(c.base_mean),
                fmt_num(c.variant_mean),
                fmt_num(c.shift.estimate),
                fmt_interval(c.shift.lower, c.shift.upper),
            ]
            for c in analysis.criterion_shifts
        ]
        sections.append(
            Section(
                "Score shifts per criterion",
                [
                    Table(
                        ["variant", "criterion", "base", "variant", "shift", f"{pct} interval"],
                        crit_rows,
                        "llrrrr",
                        caption="Criterion scores normalised by each variant's own scale, all "
                        "models pooled.",
                    )
                ],
            )
        )
    if analysis.variance is not None:
        vd = analysis.variance
        rows = [
            [
                c.source,
                str(c.levels),
                fmt_num(c.variance, 5),
                fmt_pct(c.share),
                fmt_pct(c.ss_share) if c.ss_share is not None else "—",
            ]
            for c in vd.components
        ]
        blocks: list[Any] = [
            Paragraph(f"Method: {vd.method} ({vd.formula}); n = {vd.n}. {vd.note}."),
            Table(["source", "levels", "variance", "share", "SS share"], rows, "lrrrr"),
        ]
        if vd.dropped_factors:
            blocks.append(Note(f"Single-level factors left out: {', '.join(vd.dropped_factors)}."))
        sections.append(Section("Variance decomposition (details)", blocks))
    return sections
