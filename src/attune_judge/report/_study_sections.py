"""Sections for the analysis kinds of ``summary.json``: ``calibration``, ``bench``,
``sensitivity``.

Each reads its typed block of the run's summary; a part that is absent is not shown:

``calibration``
    Its typed block (:class:`attune_judge.runs.CalibrationBlock`): a ``CalibrationReport``
    with figure data per dimension, or one part (metrics, join, confusion).
``bench``
    Its typed block (:class:`attune_judge.runs.BenchBlock`): a leaderboard per task, τ between
    the task rankings, Kendall's W.
``sensitivity``
    Its typed block (:class:`attune_judge.runs.SensitivityBlock`).
"""

from __future__ import annotations

from attune_judge.calibration import no_claim_reason
from attune_judge.report._agreement import fitted_check_section
from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._calibration import calibration_report_sections
from attune_judge.report._calibration_part import calibration_part
from attune_judge.report._format import fmt_num, fmt_pct
from attune_judge.report._leaderboard import comparison_section, leaderboard_section
from attune_judge.report._panel_sections import panels_section
from attune_judge.report._rankings import ranking_agreement_section
from attune_judge.report._rundata import RunData
from attune_judge.report._sensitivity_extra import sensitivity_extra_sections
from attune_judge.runs import (
    BenchBlock,
    BenchLeaderboard,
    BenchRow,
    CalibrationBlock,
    FittedCheck,
    RunSummary,
    SensitivityBlock,
)

__all__ = [
    "bench_sections",
    "calibration_part",
    "calibration_sections",
    "sensitivity_block_sections",
    "sensitivity_sections",
    "variant_names",
]


def calibration_sections(run: RunData) -> list[Section]:
    """Agreement with people: metrics, heatmap, confusion matrix, calibration plot."""
    rec = run.record
    cal = getattr(rec, "calibration", None)
    if not isinstance(cal, CalibrationBlock):
        return []
    top = Section("Agreement with people")
    weighting = getattr(rec, "label_weighting", None)
    if weighting:
        top.blocks.append(Note(weighting))
    top.blocks.extend(Note(w, "warning") for w in cal.warnings)
    if cal.report is not None:
        top.subsections = calibration_report_sections(cal.report, figures=cal.figures)
    else:
        top.subsections = calibration_part("", cal, "calibration-overall")
    check = getattr(rec, "fitted_check", None)
    if isinstance(check, FittedCheck):
        top.blocks.append(Note(check.message + ".", "warning"))
        held = fitted_check_section(check)
        top.subsections[:0] = [held] if held is not None else []
    return [top]


def bench_sections(run: RunData) -> list[Section]:
    """AttuneBench tasks: a leaderboard per task, then how the task rankings agree."""
    bench = getattr(run.record, "bench", None)
    if not isinstance(bench, BenchBlock):
        return []
    boards = Section("Leaderboards per task")
    for task, block in bench.tasks.items():
        boards.subsections.append(
            leaderboard_section(
                block.leaderboard or BenchLeaderboard(rows=[]),
                title=f"Task: {task}",
                key=f"bench-{task}",
                score_label=block.score_label or "score",
                xlim=block.xlim,
            )
        )
    out = [boards] if boards.subsections else []

    panels = panels_section(getattr(run.record, "panels", []))
    if panels is not None:  # a jury of draft judges (drafting task)
        out.append(panels)
    tm, w = bench.tau_matrix, bench.kendall_w
    extra = []
    if w is not None and w.w is not None:
        extra.append(
            (
                "Kendall's W across tasks",
                f"{fmt_num(w.w)} (χ² df = {w.df}, p = {fmt_num(w.p_value)})",
            )
        )
    if tm or bench.taus or extra:
        agree = ranking_agreement_section(
            tm.labels if tm else [],
            tm.matrix if tm else None,
            taus=[{"label": r.label, "tau": r.tau} for r in bench.taus or []],
            against=bench.against or "drafting",
            title="Do the tasks rank models alike?",
            key="bench-tasks",
            extra=extra,
        )
        with_boards = {t: b.leaderboard for t, b in bench.tasks.items() if b.leaderboard}
        if len(with_boards) >= 2:
            agree.subsections.append(
                comparison_section(
                    with_boards,
                    title="Scores across tasks",
                    key="bench-across-tasks",
                    group_label="task",
                    score_label="primary metric (0–1)",
                    caption="Each task's ranking on its primary metric; rank sets are "
                    "simultaneous.",
                )
            )
        out.append(agree)
    return out


def sensitivity_sections(run: RunData) -> list[Section]:
    """Rubric sensitivity: τ to the base, flips, scores by variant, variance shares."""
    sens = getattr(run.record, "sensitivity", None)
    if not isinstance(sens, SensitivityBlock):
        return []
    return sensitivity_block_sections(sens)


def sensitivity_block_sections(sens: SensitivityBlock) -> list[Section]:
    """The sections of a typed ``sensitivity`` block (a sensitivity run, the demo's part d)."""
    variants = sens.variants
    top = Section("Rubric sensitivity")
    for key, value in (("Study", sens.study), ("Description", sens.description)):
        if value:
            top.blocks.append(Paragraph(f"{key}: {value}"))
    top.blocks.extend(Note(note, "warning") for note in sens.notes)
    if sens.rule:
        top.blocks.append(Paragraph(sens.rule))
    taus = [
        {"label": name, "tau": v.tau, "stable": v.stable, "verdict": v.verdict}
        for name, v in variants.items()
        if name != sens.base
    ]
    tm = sens.tau_matrix
    top.subsections.append(
        ranking_agreement_section(
            tm.labels if tm else [],
            tm.matrix if tm else None,
            taus=taus,
            flips=sens.flips,
            against=sens.base,
            title="Ranking stability across variants",
            key="sensitivity",
        )
    )
    boards = {
        name: BenchLeaderboard(
            rows=[
                BenchRow(
                    model=s.model,
                    score=s.score,
                    rank=s.rank,
                    rank_set_simultaneous=s.rank_set,
                    no_rank_claim=no_claim_reason(s.score),
                )
                for s in v.leaderboard
            ]
        )
        for name, v in variants.items()
        if v.leaderboard
    }
    if boards:
        top.subsections.append(
            comparison_section(
                boards,
                title="Scores by variant",
                key="sensitivity-scores",
                caption="Each variant's ranking with its intervals and simultaneous rank sets.",
            )
        )
    if sens.variance_components:
        top.subsections.append(
            Section(
                "Sources of variance",
                [
                    Table(
                        ["component", "variance", "share"],
                        [
                            [c.component, fmt_num(c.variance, 4), fmt_pct(c.share)]
                            for c in sens.variance_components
                        ],
                        "lrr",
                        caption="Share of score variance explained by each component.",
                    )
                ],
            )
        )
    if sens.analysis is not None:
        top.subsections += sensitivity_extra_sections(sens.analysis)
    return [top]


def variant_names(record: RunSummary | None) -> dict[str, str]:
    """``judge_id -> "variant, variant"`` of a sensitivity run (empty otherwise)."""
    sens = getattr(record, "sensitivity", None)
    out: dict[str, list[str]] = {}
    for name, v in (sens.variants if isinstance(sens, SensitivityBlock) else {}).items():
        out.setdefault(v.judge_id, []).append(name)
    return {jid: ", ".join(names) for jid, names in out.items()}
