"""``calibrate``'s run directory: its typed summary, then the report through the one door
:func:`~attune_judge.report.write_report` (the kind's sections come from the section registry,
:data:`~attune_judge.report.SECTION_BUILDERS`; none is inserted by position).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attune_judge.calibration import CalibrationReport
from attune_judge.report._build import write_report
from attune_judge.report._calibration import calibration_figure_data
from attune_judge.runs import CalibrateSummary, CalibrationBlock, write_summary

__all__ = ["write_calibration_run"]


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
