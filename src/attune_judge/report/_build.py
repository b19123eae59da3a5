"""Build and write the report of a run directory.

:func:`build_report` reads ``manifest.json`` and ``summary.json`` and renders what applies:
every *kind* of result found in the summary has a section builder in :data:`SECTION_BUILDERS`
(``judges`` — the runner's scores; ``calibration``, ``bench`` and ``sensitivity`` results),
followed by the failures and the manifest. :func:`write_report` writes ``report.md``,
``report.html`` and ``figures/*.png``; a command can pass its own sections instead.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attune_judge._secrets import redact
from attune_judge.report._align_sections import align_sections
from attune_judge.report._bench_extra import bench_run_sections
from attune_judge.report._blocks import Figure, KeyValues, Note, Report, Section
from attune_judge.report._controlled_sections import controlled_sections
from attune_judge.report._demo_sections import duo_sections, recorded_judges_sections
from attune_judge.report._figcache import figure_cache
from attune_judge.report._format import fmt_num
from attune_judge.report._html import render_html
from attune_judge.report._markdown import render_markdown
from attune_judge.report._ppi_sections import ppi_sections
from attune_judge.report._run_sections import judges_failures_section, manifest_section
from attune_judge.report._rundata import RunData, load_run
from attune_judge.report._score_sections import score_sections
from attune_judge.report._study_sections import (
    calibration_sections,
    sensitivity_sections,
    variant_names,
)
from attune_judge.runs import DegenerateFinding, JudgeBlock, RunManifest, RunSummary, read_manifest

__all__ = ["SECTION_BUILDERS", "build_report", "detect_kinds", "write_report"]

log = logging.getLogger(__name__)


SectionBuilder = Callable[[RunData], list[Section]]

SECTION_BUILDERS: dict[str, SectionBuilder] = {
    "judges": score_sections,
    "calibration": calibration_sections,
    "bench": bench_run_sections,
    "sensitivity": sensitivity_sections,
    "recorded_judges": recorded_judges_sections,
    "duo": duo_sections,
    "ppi": ppi_sections,
    "controlled": controlled_sections,
    "align": align_sections,
}
"""Summary key → section builder, in report order. A summary may hold several kinds."""

STUDY_KINDS = ("bench", "sensitivity")
"""Kinds whose runs judge with many judges and draw their own per-judge leaderboards."""


def detect_kinds(summary: Mapping[str, Any]) -> list[str]:
    """The kinds of results in a summary, in report order (keys of :data:`SECTION_BUILDERS`)."""
    return [k for k in SECTION_BUILDERS if summary.get(k)]


def _overview(run: RunData, kinds: Sequence[str]) -> Section:
    info: Any = getattr(run.record, "run", None)  # RunFacts (score, bench, sensitivity runs)
    items: list[tuple[str, str]] = [("run directory", run.path.name)]
    if run.manifest is not None:
        items.append(("command", run.manifest.command))
    if isinstance(run.manifest, RunManifest) and run.manifest.models:
        items.append(("models", ", ".join(run.manifest.models)))
    if info is not None:
        for value, label in (
            (info.n_tasks, "planned judgments"),
            (info.complete, "complete"),
            (info.invocations, "invocations"),
            (info.n_run, "judged in last invocation"),
            (info.n_skipped, "already done before it"),
        ):
            if value is not None:
                items.append((label, str(value)))
        if info.wall_time_s is not None:
            items.append(("wall time of the last invocation", f"{fmt_num(info.wall_time_s, 1)} s"))
    items.append(("contents", ", ".join(kinds) if kinds else "none"))
    section = Section("Overview", [KeyValues(items)])
    if info is not None and info.stopped:
        section.blocks.append(Note(f"The run stopped early: {info.stopped}.", "warning"))
    elif info is not None and not info.complete:
        counts = info.n_by_status
        text = (
            "The run is incomplete: no planned judgment is ok, so nothing was scored."
            if not counts.get("missing") and not counts.get("ok")
            else "The run is incomplete: some planned judgments are missing; run the same "
            "command again to resume."
        )
        section.blocks.append(Note(text, "warning"))
    for line in degenerate_notes(run.record):
        section.blocks.append(Note(line, "warning"))
    return section


def degenerate_notes(record: RunSummary | None) -> list[str]:
    """One sentence per degenerate judge finding of a summary (judge blocks, or the top-level
    ``degenerate`` list of validate and bench)."""
    found: list[tuple[str, DegenerateFinding]] = []
    judges: dict[str, JudgeBlock] = getattr(record, "judges", None) or {}
    for jid, block in judges.items():
        found += [(f"{block.label or jid} ({jid})", f) for f in block.degenerate]
    for f in getattr(record, "degenerate", None) or []:
        found.append((f.judge_id or "the judge", f))
    return [f"Degenerate judge {who}: {f.message}." for who, f in found]


def build_report(run_dir: Path | str) -> Report:
    """The report of a run directory: overview, a section per result kind, manifest.

    Parameters
    ----------
    run_dir
        A directory written by ``score``, ``calibrate``, ``bench``, ``sensitivity`` or
        ``demo``.

    Returns
    -------
    Report
        Render with :func:`render_markdown` / :func:`render_html`, or write with
        :func:`write_report`.
    """
    run = load_run(run_dir)
    kinds = detect_kinds(run.summary)
    sections = [_overview(run, kinds)]
    studies = [k for k in kinds if k != "judges"]
    if "judges" in kinds and any(k in STUDY_KINDS for k in studies):
        # a study (variants, tasks) ran many judges: its own sections show the scores, the
        # judges only need their failures, tokens and cost
        for kind in studies:
            sections.extend(SECTION_BUILDERS[kind](run))
        sections.append(
            judges_failures_section(
                getattr(run.record, "judges", {}), names=variant_names(run.record)
            )
        )
    else:
        for kind in kinds:
            sections.extend(SECTION_BUILDERS[kind](run))
    if not kinds:
        sections.append(
            Section(
                "Results",
                [
                    Note(
                        "summary.json holds no results this report knows how to show "
                        f"(looked for: {', '.join(SECTION_BUILDERS)}).",
                        "warning",
                    )
                ],
            )
        )
    if run.manifest is not None:
        sections.append(manifest_section(run.manifest))
    command = run.manifest.command if run.manifest else run.summary.get("kind", "run")
    created = run.manifest.created_at if run.manifest else None
    subtitle = f"Run directory {run.path.name}" + (f", created {created}" if created else "")
    return Report(f"attune-judge {command} report", sections, subtitle)


def _unique_figures(report: Report) -> None:
    """Give every figure a unique file name (``-2``, ``-3`` ... on collisions), in place."""
    seen: set[str] = set()

    def fix(section: Section) -> None:
        for i, block in enumerate(section.blocks):
            if isinstance(block, Figure):
                name, k = block.name, 2
                while name in seen:
                    name, k = f"{block.name}-{k}", k + 1
                seen.add(name)
                if name != block.name:
                    section.blocks[i] = dataclasses.replace(block, name=name)
        for sub in section.subsections:
            fix(sub)

    for s in report.sections:
        fix(s)


def write_report(
    run_dir: Path | str,
    sections: Report | Sequence[Section] | None = None,
    *,
    title: str | None = None,
) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and ``figures/*.png`` into ``run_dir``.

    Parameters
    ----------
    run_dir
        The run directory (created if missing when ``sections`` are given).
    sections
        ``None``: build the report from the directory (:func:`build_report`). A
        :class:`Report`, or a list of sections (a command's own; the manifest section is
        appended when ``manifest.json`` exists and no section already shows it).
    title
        Title for a list of sections (default ``attune-judge report``).

    Returns
    -------
    tuple of Path
        ``(report.md, report.html)``.
    """
    path = Path(run_dir)
    with figure_cache(path) as cache:  # figures whose inputs did not change are reused
        if sections is None:
            report = build_report(path)
        elif isinstance(sections, Report):
            report = sections
        else:
            report = Report(title or "attune-judge report", list(sections))
            manifest = read_manifest(path) if path.is_dir() else None
            if manifest and not any(s.title == "What ran" for s in report.sections):
                report.sections.append(manifest_section(manifest))
    _unique_figures(report)
    path.mkdir(parents=True, exist_ok=True)
    figures = report.figures()
    md_path, html_path = path / "report.md", path / "report.html"
    _remove_stale_figures(path, md_path, {f"{f.name}.png" for f in figures})
    if figures:
        (path / "figures").mkdir(exist_ok=True)
    for fig in figures:
        _write_if_changed(path / "figures" / f"{fig.name}.png", fig.png)
    cache.save({f"{f.name}.png": f.png for f in figures})
    _atomic_write(md_path, render_markdown(report))
    _atomic_write(
        html_path,
        render_html(
            report, footer="Made by attune-judge. Figures are embedded; this file needs no network."
        ),
    )
    log.info(
        "wrote %s and %s (%d figures: %d drawn, %d unchanged)",
        md_path,
        html_path,
        len(figures),
        cache.drawn,
        cache.reused,
    )
    return md_path, html_path


def _remove_stale_figures(path: Path, md_path: Path, keep: set[str]) -> None:
    """Delete figures the previous report.md linked to that the new report no longer has.

    Only files the previous report referenced are touched: other files in ``figures/`` are
    never ours to delete.
    """
    try:
        old = md_path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return
    for name in set(re.findall(r"\]\(figures/([A-Za-z0-9._-]+\.png)\)", old)) - keep:
        (path / "figures" / name).unlink(missing_ok=True)


def _holds(path: Path, data: bytes) -> bool:
    """``path`` already holds exactly ``data``."""
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _write_if_changed(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` unless it already holds exactly those bytes (a report
    rewritten with nothing changed leaves its files, and their times, as they were)."""
    if not _holds(path, data):
        path.write_bytes(data)


def _atomic_write(path: Path, text: str) -> None:
    text = redact(text)
    if _holds(path, text.encode("utf-8")):
        return  # unchanged: not rewritten
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
