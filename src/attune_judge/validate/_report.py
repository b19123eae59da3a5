"""The report of a ``validate`` run directory (``report.md``, ``report.html``, figures):
the report package's section builders plus the explanations of the validation.

``validate`` stores its results in ``summary.json`` under keys the report package knows
(``recorded_judges``, ``calibration``, ``baselines``), so ``attune-judge report RUN`` redraws
the numbers and figures (without the explanations). The demo reuses these sections.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attune_judge.report import (
    KeyValues,
    Note,
    Paragraph,
    Report,
    Section,
    Table,
    calibration_report_sections,
    load_run,
    manifest_section,
    read_json,
    recorded_judges_section,
    write_report,
)
from attune_judge.runs import CalibrationBlock

__all__ = [
    "judge_rows_table",
    "validation_sections",
    "write_validation_report",
]


def _f(x: Any, digits: int = 2) -> str:
    return "—" if x is None else f"{float(x):.{digits}f}"


def _metric(m: Any) -> str:
    """``0.61 [0.52, 0.70]`` from a Metric dump (``—`` when undefined)."""
    if not isinstance(m, Mapping) or m.get("estimate") is None:
        return "—"
    text = _f(m["estimate"])
    if m.get("lower") is not None and m.get("upper") is not None:
        text += f" [{_f(m['lower'])}, {_f(m['upper'])}]"
    return text


def judge_rows_table(rows: Sequence[Any], *, caption: str | None = None) -> Table:
    """Every statistic of the judge rows (``JudgeRow`` or dumps), one row per dimension × judge:
    κ_qw and Spearman with intervals, α with and without the judge, both leave-one-out
    ceilings, and the alternative annotator test."""
    cells = []
    for row in rows:
        r = row.model_dump(mode="json") if hasattr(row, "model_dump") else dict(row)
        alt = _f(r.get("alt_test_winning_rate"))
        if r.get("alt_test_passed"):
            alt += " (passed)"
        cells.append(
            [
                str(r.get("source")),
                str(r.get("dimension")),
                str(r.get("judge")),
                _metric(r.get("kappa_qw")),
                _metric(r.get("spearman")),
                f"{_metric(r.get('alpha_humans'))} → {_metric(r.get('alpha_with_judge'))}",
                f"{_f(r.get('kappa_ceiling_humans'))} / {_f(r.get('kappa_ceiling_judge'))}",
                f"{_f(r.get('spearman_ceiling_humans'))} / {_f(r.get('spearman_ceiling_judge'))}",
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


def validation_sections(summary: Mapping[str, Any], *, title: str | None = None) -> list[Section]:
    """The sections of a ``validate`` run from its ``summary.json`` (see
    :func:`write_validation_report`)."""
    info: Mapping[str, Any] = summary.get("validation") or {}
    lm, set_name = info.get("lm", "?"), info.get("set_name", "?")
    top = Section(title or f"Validating {lm} on {set_name}")
    if info.get("description"):
        top.blocks.append(Paragraph(str(info["description"]) + "."))
    failed = info.get("failure_reasons") or info.get("n_failed") or {}
    top.blocks.append(
        KeyValues(
            [
                ("judge model", str(lm)),
                ("rubric", str(info.get("rubric", "?"))),
                ("items judged", str(info.get("n_items", "?"))),
                ("judgments ok", str(info.get("n_ok", "?"))),
                ("failed", ", ".join(f"{k}: {v}" for k, v in failed.items()) or "0"),
                ("different score combinations", str(info.get("distinct_score_vectors", "?"))),
            ]
        )
    )
    for note in info.get("notes") or []:
        top.blocks.append(Note(str(note), "warning"))
    for finding in summary.get("degenerate") or []:
        text = f"Degenerate judge {lm}: {finding.get('message')}; read its agreement as noise."
        top.blocks.append(Note(text, "warning"))
    rows = summary.get("recorded_judges") or []
    if not rows:
        if not info.get("not_compared"):  # else the note above says why
            top.blocks.append(Note("No usable judgment: nothing to compare.", "warning"))
        return [top]
    top.subsections.append(
        recorded_judges_section(rows, title="The judge beside the recorded judges and people")
    )
    top.subsections.append(Section("All statistics", [judge_rows_table(rows)]))
    cal = CalibrationBlock.model_validate(summary.get("calibration") or {})
    if cal.report is not None:
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
    shipped = summary.get("calibrated")
    if isinstance(shipped, Mapping):
        top.subsections.append(_calibrated_section(shipped))
    return [top]


def _calibrated_section(block: Mapping[str, Any]) -> Section:
    """Before / after the shipped calibration head, on its held-out items (``validate``'s
    ``calibrated`` block): Spearman ρ with the people of the raw and calibrated scores beside
    the baselines, each judge's paired difference to the length baseline, Brier and ECE."""
    section = Section(f"Calibrated by the shipped head {block.get('head', '?')}")
    if block.get("note"):
        section.blocks.append(Note(str(block["note"]), "warning"))
        return section
    section.blocks.append(
        Paragraph(
            "The head was fitted on this set's train and dev conversations; these items are its "
            "test conversations. Spearman ρ with the people (95% cluster-bootstrap intervals); "
            "differences to the length baseline are paired (same resampled conversations)."
        )
    )
    raw = (block.get("uncalibrated") or {}).get("dimensions") or {}
    cal = (block.get("calibrated") or {}).get("dimensions") or {}
    cells = []
    for dim, entry in cal.items():
        a, b = (raw.get(dim) or {}).get("agreement") or {}, entry.get("agreement") or {}
        sp_a, sp_b = a.get("spearman") or {}, b.get("spearman") or {}
        p_a, p_b = (raw.get(dim) or {}).get("probability_scores"), entry.get("probability_scores")
        brier = "—" if not (p_a and p_b) else f"{p_a['brier']:.3f} → {p_b['brier']:.3f}"
        cells.append(
            [
                str(dim),
                str(b.get("n", "?")),
                _metric(sp_a.get("judge")),
                _metric(sp_b.get("judge")),
                _metric(sp_b.get("length")),
                _metric(sp_b.get("lexicon")),
                _metric((a.get("difference") or {}).get("length")),
                _metric((b.get("difference") or {}).get("length")),
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
    summary = load_run(run_dir).summary
    info: Mapping[str, Any] = summary.get("validation") or {}
    sections = validation_sections(summary)
    runner = read_json(run_dir / "run" / "manifest.json")
    if runner:
        sections.append(manifest_section(runner, title="What ran (the judge run in run/)"))
    title = f"attune-judge validate: {info.get('lm', '?')} on {info.get('set_name', '?')}"
    return write_report(run_dir, Report(title, sections, f"Run directory {run_dir.name}"))
