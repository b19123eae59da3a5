"""Commands' writers of run directories, all through the one door :func:`write_report`.

Every writer here renders the report with :func:`~attune_judge.report.write_report` from
what the run directory holds (``summary.json`` + ``manifest.json``): the kind's sections
come from the section registry (:data:`~attune_judge.report.SECTION_BUILDERS`), none is
inserted by position. ``write_bench_report`` and ``write_sensitivity_report`` are kept as
names for what the ``bench`` and ``sensitivity`` commands write.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attune_judge.calibration import CalibrationReport
from attune_judge.report._blocks import Section
from attune_judge.report._build import build_report, write_report
from attune_judge.report._calibration import calibration_figure_data
from attune_judge.report._sensitivity_extra import sensitivity_extra_sections
from attune_judge.runs import CalibrateSummary, CalibrationBlock, write_summary

if TYPE_CHECKING:
    from attune_judge.calibration import SensitivityAnalysis

__all__ = [
    "write_bench_report",
    "write_calibration_run",
    "write_sensitivity_report",
]


write_bench_report = write_report
"""What ``attune-judge bench`` writes after :func:`attune_judge.tasks.run_bench`: the bench
run directory's ``report.md`` / ``report.html``, the same as :func:`write_report`."""


def write_calibration_run(
    out_dir: Path | str,
    report: Any,
    *,
    human: Sequence[Any] | None = None,
    judge: Sequence[Any] | None = None,
    label_weighting: str | None = None,
) -> tuple[Path, Path]:
    """Write a calibration run directory: ``summary.json`` (kind ``calibration``) and the report.

    Parameters
    ----------
    out_dir
        Directory to create or update.
    report
        The ``CalibrationReport`` (or its dump).
    human, judge
        The ``Rating`` records, when available: they add the rater heatmap, the confusion
        matrix and the calibration plot (:func:`calibration_figure_data`).
    label_weighting
        The statement that the human labels were weighted by 1 / inclusion probability.

    Returns
    -------
    tuple of Path
        ``(report.md, report.html)``.
    """
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    block = CalibrationBlock(report=CalibrationReport.model_validate(report))
    if human and judge:
        block.figures = calibration_figure_data(human, judge)
    write_summary(path, CalibrateSummary(calibration=block, label_weighting=label_weighting))
    return write_report(path)


def _titles(sections: Sequence[Section]) -> set[str]:
    out: set[str] = set()
    for sec in sections:
        out.add(sec.title)
        out |= _titles(sec.subsections)
    return out


def write_sensitivity_report(
    run_dir: Path | str, analysis: SensitivityAnalysis | None = None
) -> tuple[Path, Path]:
    """Write ``report.md`` / ``report.html`` (with figures) of a sensitivity run directory.

    The report package's report of the directory plus :func:`sensitivity_extra_sections` of
    ``analysis`` (those already drawn from ``summary.json`` are not repeated). What
    ``attune-judge sensitivity`` writes after :func:`attune_judge.sensitivity.run_sensitivity`
    (pass its ``result.analysis``); Python users call it themselves when they want the report.

    Returns
    -------
    tuple[Path, Path]
        The Markdown and HTML paths.
    """
    report = build_report(run_dir)
    extra = [] if analysis is None else sensitivity_extra_sections(analysis)
    # the report already renders these from summary.json's typed block
    extra = [sec for sec in extra if sec.title not in _titles(report.sections)]
    if extra:
        for section in report.sections:
            if section.title == "Rubric sensitivity":
                section.subsections.extend(extra)
                break
        else:
            report.sections[1:1] = extra
    return write_report(run_dir, report)
