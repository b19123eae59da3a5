"""The report of a ``validate`` run directory (``report.md``, ``report.html``, figures):
the report package's section builders plus the explanations of the validation.

``validate`` stores its results in ``summary.json`` under keys the report package knows
(``recorded_judges``, ``calibration``, ``baselines``), so ``attune-judge report RUN`` redraws
the numbers and figures (without the explanations). The demo reuses these sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from attune_judge.calibration import BaselineAgreement, Metric, fmt_num
from attune_judge.errors import UserError
from attune_judge.report import (
    KeyValues,
    Note,
    Paragraph,
    Report,
    Section,
    Table,
    calibration_report_sections,
    fitted_check_section,
    load_run,
    manifest_section,
    recorded_judges_section,
    write_report,
)
from attune_judge.runs import CalibratedBlock, JudgeRow, ValidateSummary, read_manifest

__all__ = [
    "judge_rows_table",
    "validation_sections",
    "write_validation_report",
]


def _metric(m: Metric | None) -> str:
    """``0.61 [0.52, 0.70]`` from a Metric (``—`` when undefined)."""
    if m is None or m.estimate is None:
        return "—"
    text = fmt_num(m.estimate, 2)
    if m.lower is not None and m.upper is not None:
        text += f" [{fmt_num(m.lower, 2)}, {fmt_num(m.upper, 2)}]"
    return text


def judge_rows_table(rows: Sequence[JudgeRow], *, caption: str | None = None) -> Table:
    """Every statistic of the judge rows, one row per dimension × judge: κ_qw and Spearman
    with intervals, α with and without the judge, both leave-one-out ceilings, and the
    alternative annotator test."""
    cells = []
    for r in rows:
        alt = fmt_num(r.alt_test_winning_rate, 2) + (" (passed)" if r.alt_test_passed else "")
        cells.append(
            [
                r.source,
                r.dimension,
                r.judge,
                _metric(r.kappa_qw),
                _metric(r.spearman),
                f"{_metric(r.alpha_humans)} → {_metric(r.alpha_with_judge)}",
                f"{fmt_num(r.kappa_ceiling_humans, 2)} / {fmt_num(r.kappa_ceiling_judge, 2)}",
                f"{fmt_num(r.spearman_ceiling_humans, 2)} / {fmt_num(r.spearman_ceiling_judge, 2)}",
                alt,
            ]
        )
    return Table(
        [
            "source",
            "dimension",
            "judge",
            "κ_qw vs humans [95% CI]",
            "Spearman [95% CI]",
            "α humans → with judge",
            "κ_qw ceiling: humans / judge",
            "ρ ceiling: humans / judge",
            "alt-test ω",
        ],
        cells,
        "lllrrrrrr",
        caption=caption
        or "Each judge against the median of the reference humans; ceilings are leave-one-out "
        "(each human, then the judge, against the median of the other humans).",
    )


def validation_sections(summary: ValidateSummary, *, title: str | None = None) -> list[Section]:
    """The sections of a ``validate`` run from its typed summary (see
    :func:`write_validation_report`)."""
    info = summary.validation
    lm = info.lm
    top = Section(title or f"Validating {lm} on {info.set_name}")
    if info.description:
        top.blocks.append(Paragraph(info.description + "."))
    failed = info.failure_reasons or info.n_failed
    top.blocks.append(
        KeyValues(
            [
                ("judge model", lm),
                ("rubric", info.rubric),
                ("items judged", str(info.n_items)),
                ("judgments ok", str(info.n_ok)),
                ("failed", ", ".join(f"{k}: {v}" for k, v in failed.items()) or "0"),
                ("different score combinations", str(info.distinct_score_vectors)),
            ]
        )
    )
    top.blocks.extend(Note(note, "warning") for note in info.notes)
    for finding in summary.degenerate:
        text = f"Degenerate judge {lm}: {finding.message}; read its agreement as noise."
        top.blocks.append(Note(text, "warning"))
    rows = summary.recorded_judges or []
    if not rows:
        if not info.not_compared:  # else the note above says why
            top.blocks.append(Note("No usable judgment: nothing to compare.", "warning"))
        return [top]
    check = summary.fitted_check
    if check is not None:
        top.blocks.append(Note(check.message + ".", "warning"))
        held = fitted_check_section(check)
        top.subsections += [held] if held is not None else []
    top.subsections.append(
        recorded_judges_section(rows, title="The judge beside the recorded judges and people")
    )
    top.subsections.append(Section("All statistics", [judge_rows_table(rows)]))
    cal = summary.calibration
    if cal is not None and cal.report is not None:
        per_dim = Section(
            "Agreement with the people, per dimension",
            [
                Paragraph(
                    "Every judge (the new one and those recorded) against the reference people: "
                    "metrics with cluster-bootstrap intervals, α with the judge as one more coder, "
                    "the leave-one-out ceiling, and for the new judge the rater heatmap, the "
                    "confusion matrix and the calibration plot."
                )
            ],
        )
        per_dim.subsections = calibration_report_sections(cal.report, figures=cal.figures)
        top.subsections.append(per_dim)
    if summary.calibrated is not None:
        top.subsections.append(_calibrated_section(summary.calibrated))
    return [top]


def _calibrated_section(block: CalibratedBlock) -> Section:
    """Before / after the shipped calibration head, on its held-out items (``validate``'s
    ``calibrated`` block): Spearman ρ with the people of the raw and calibrated scores beside
    the baselines, each judge's paired difference to the length baseline, Brier and ECE."""
    section = Section(f"Calibrated by the shipped head {block.head}")
    if block.note:
        section.blocks.append(Note(block.note, "warning"))
        return section
    section.blocks.append(
        Paragraph(
            "The head was fitted on this set's train and dev conversations; these items are its "
            "test conversations. Spearman ρ with the people (95% cluster-bootstrap intervals); "
            "differences to the length baseline are paired (same resampled conversations)."
        )
    )
    raw = block.uncalibrated.dimensions if block.uncalibrated else {}
    cal = block.calibrated.dimensions if block.calibrated else {}
    cells = []
    for dim, entry in cal.items():
        before = raw.get(dim)
        a = before.agreement if before else BaselineAgreement(n=0, n_clusters=0)
        b = entry.agreement
        p_a, p_b = before.probability_scores if before else None, entry.probability_scores
        brier = "—" if not (p_a and p_b) else f"{p_a.brier:.3f} → {p_b.brier:.3f}"
        cells.append(
            [
                dim,
                str(b.n),
                _metric(a.spearman.get("judge")),
                _metric(b.spearman.get("judge")),
                _metric(b.spearman.get("length")),
                _metric(b.spearman.get("lexicon")),
                _metric(a.difference.get("length")),
                _metric(b.difference.get("length")),
                brier,
            ]
        )
    section.blocks.append(
        Table(
            [
                "dimension",
                "n",
                "ρ raw",
                "ρ calibrated",
                "ρ length",
                "ρ lexicon",
                "raw − length",
                "calibrated − length",
                "Brier raw → calibrated",
            ],
            cells,
            "lrrrrrrrr",
        )
    )
    return section


def write_validation_report(run_dir: Path) -> tuple[Path, Path]:
    """``report.md`` / ``report.html`` of a ``validate`` run directory (its summary.json)."""
    summary = load_run(run_dir).record
    if not isinstance(summary, ValidateSummary):
        raise UserError(f"{run_dir}: not a validate run directory (no validate summary.json)")
    info = summary.validation
    sections = validation_sections(summary)
    runner = read_manifest(run_dir / "run")
    if runner is not None:
        sections.append(manifest_section(runner, title="What ran (the judge run in run/)"))
    title = f"attune-judge validate: {info.lm} on {info.set_name}"
    return write_report(run_dir, Report(title, sections, f"Run directory {run_dir.name}"))
