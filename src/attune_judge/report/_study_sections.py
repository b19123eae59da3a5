"""Sections for the analysis kinds of ``summary.json``: ``calibration``, ``bench``,
``sensitivity``.

``sensitivity`` and ``calibration`` read their typed blocks
(:class:`attune_judge.runs.SensitivityBlock`, :class:`~attune_judge.runs.CalibrationBlock`). The
others read plain dicts (result models dumped with ``model_dump(mode="json")``) and are
tolerant: a part that is absent is simply not shown. The shapes read are:

``calibration``
    Its typed block (:class:`attune_judge.runs.CalibrationBlock`): a ``CalibrationReport``
    with figure data per dimension, or one part (metrics, join, confusion).
``bench``
    ``tasks``: ``{task: {"leaderboard": ..., "score_label": ..., "xlim": [lo, hi]}}``;
    ``tau_matrix``: ``{"labels", "matrix"}``; ``taus`` (rows for the τ table);
    ``kendall_w`` (a KendallW dict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._calibration import calibration_report_sections
from attune_judge.report._calibration_part import calibration_part
from attune_judge.report._format import fmt_num, fmt_pct
from attune_judge.report._leaderboard import comparison_section, leaderboard_section
from attune_judge.report._rankings import ranking_agreement_section
from attune_judge.report._rundata import RunData
from attune_judge.report._sensitivity_extra import sensitivity_extra_sections
from attune_judge.runs import CalibrationBlock, RunSummary, SensitivityBlock

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
    if cal.report is not None:
        top.subsections = calibration_report_sections(cal.report, figures=cal.figures)
    else:
        top.subsections = calibration_part("", cal, "calibration-overall")
    return [top]


def bench_sections(run: RunData) -> list[Section]:
    """AttuneBench tasks: a leaderboard per task, then how the task rankings agree."""
    bench: Mapping[str, Any] = run.summary.get("bench") or {}
    tasks: Mapping[str, Any] = bench.get("tasks") or {}
    boards = Section("Leaderboards per task")
    for task, block in tasks.items():
        xlim = block.get("xlim")
        boards.subsections.append(
            leaderboard_section(
                block.get("leaderboard") or {},
                title=f"Task: {task}",
                key=f"bench-{task}",
                score_label=str(block.get("score_label") or "score"),
                xlim=tuple(xlim) if xlim else None,
            )
        )
    out = [boards] if boards.subsections else []
    from attune_judge.report._panel_sections import panels_section

    panels = panels_section(run.summary.get("panels") or [])
    if panels is not None:  # a jury of draft judges (drafting task)
        out.append(panels)
    tm = bench.get("tau_matrix") or {}
    w = bench.get("kendall_w") or {}
    extra = []
    if w.get("w") is not None:
        extra.append(
            (
                "Kendall's W across tasks",
                f"{fmt_num(w['w'])} (χ² df = {w.get('df', '?')}, p = {fmt_num(w.get('p_value'))})",
            )
        )
    if tm or bench.get("taus") or extra:
        agree = ranking_agreement_section(
            tm.get("labels", []),
            tm.get("matrix"),
            taus=bench.get("taus"),
            against=str(bench.get("against", "drafting")),
            title="Do the tasks rank models alike?",
            key="bench-tasks",
            extra=extra,
        )
        with_boards = {t: b["leaderboard"] for t, b in tasks.items() if b.get("leaderboard")}
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
    boards = {name: v.leaderboard for name, v in variants.items() if v.leaderboard}
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
