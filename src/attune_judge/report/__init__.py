"""Reports people read: Markdown and single-file HTML with figures.

``write_report(run_dir)`` renders what a run directory holds. ``summary.json`` may carry any of
these kinds of results (keys), each drawn by its own section builder:

- ``judges`` — the runner's per-judge, per-model scores (``score``): leaderboard with intervals
  and rank sets, forest and rank-set plots, criterion means, failures, tokens and cost;
- ``calibration`` — a ``CalibrationReport`` (plus optional figure data): metrics, α, ceilings,
  rater heatmap, confusion matrix, calibration plot;
- ``bench`` — per-task leaderboards and the agreement of the task rankings;
- ``sensitivity`` — τ to the base, rank flips, scores by variant, variance shares, verdicts
  and score shifts;
- ``recorded_judges`` / ``duo`` — the demo's parts.

``manifest.json`` adds the "What ran" section. Commands can also compose their own report from
section builders (``leaderboard_section`` takes a calibration ``Leaderboard`` or a
``runs.BenchLeaderboard``)::

    from attune_judge.report import leaderboard_section, write_report

    write_report(run_dir, [leaderboard_section(board)], title="My analysis")

Every kind's sections come from the registry :data:`SECTION_BUILDERS` (summary key → builder),
so ``write_report(run_dir)`` is the one renderer for every run kind (the runner writes only
the records: call it after ``run_score`` / ``run_bench`` / ``run_sensitivity``);
``write_calibration_run`` writes the calibration summary first, then calls it.

Figure functions (``forest_plot``, ``rank_set_plot``, ...) take plain arrays and return PNG bytes;
matplotlib is imported only when a figure is drawn, and never through pyplot.
"""

from attune_judge.report._agreement import fitted_check_section
from attune_judge.report._blocks import Figure, KeyValues, Note, Paragraph, Report, Section, Table
from attune_judge.report._build import SECTION_BUILDERS, write_report
from attune_judge.report._calibration import calibration_figure_data, calibration_report_sections
from attune_judge.report._demo_sections import recorded_judges_section
from attune_judge.report._fig_matrices import (
    agreement_heatmap,
    calibration_plot,
    confusion_matrix_plot,
    tau_heatmap,
)
from attune_judge.report._fig_scores import forest_plot, rank_set_plot, status_plot
from attune_judge.report._html import render_html
from attune_judge.report._leaderboard import leaderboard_section
from attune_judge.report._markdown import render_markdown
from attune_judge.report._run_sections import manifest_section
from attune_judge.report._rundata import load_run
from attune_judge.report._writers import write_calibration_run

__all__ = [
    "SECTION_BUILDERS",
    "Figure",
    "KeyValues",
    "Note",
    "Paragraph",
    "Report",
    "Section",
    "Table",
    "agreement_heatmap",
    "calibration_figure_data",
    "calibration_plot",
    "calibration_report_sections",
    "confusion_matrix_plot",
    "fitted_check_section",
    "forest_plot",
    "leaderboard_section",
    "load_run",
    "manifest_section",
    "rank_set_plot",
    "recorded_judges_section",
    "render_html",
    "render_markdown",
    "status_plot",
    "tau_heatmap",
    "write_calibration_run",
    "write_report",
]
