"""Bench-specific report sections: the ``bench`` entry of the report's section registry.

:func:`bench_run_sections` is what :func:`~attune_judge.report._build.build_report` draws for a
``bench`` summary: the leaderboard per task and the τ heatmap between task rankings
(``_study_sections.bench_sections``), then what only a bench run has: every metric per task
and model, the discriminability table, failures by status, and Kendall's W with its interval.
It reads the typed ``bench`` block (:class:`~attune_judge.runs.BenchBlock`) that
:func:`attune_judge.tasks.run_bench` stores in ``summary.json``.
"""

from __future__ import annotations

from attune_judge.calibration import Metric
from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData
from attune_judge.report._study_sections import bench_sections
from attune_judge.runs import BenchBlock

__all__ = ["bench_extra_sections", "bench_run_sections"]


def _fmt_metric(m: Metric | None) -> str:
    if m is None or m.estimate is None:
        return "—"
    return f"{fmt_num(m.estimate)} {fmt_interval(m.lower, m.upper)}"


def bench_extra_sections(bench: BenchBlock) -> list[Section]:
    """Sections: all metrics per task, discriminability, Kendall's W interval."""
    models, boot = bench.models, bench.bootstrap
    top = Section("All task metrics")
    top.blocks.append(
        Note(
            f"{int(100 * boot.level)}% intervals: paired cluster bootstrap over "
            f"{boot.n_conversations} conversations (B = {boot.B}, seed "
            f"{boot.seed}), one draw shared by every model and task."
        )
    )
    for task, block in bench.tasks.items():
        rows = []
        for name, metric in block.metrics.items():
            arrow = "↑" if metric.higher_is_better else "↓"
            rows.append([f"{name} {arrow}", *(_fmt_metric(metric.models.get(m)) for m in models)])
        for target, per in (block.pooled_binary or {}).items():
            for stat in ("f1", "mcc"):
                rows.append(
                    [
                        f"{target} {stat} (pooled) ↑",
                        *(_fmt_metric(per.get(m, {}).get(stat)) for m in models),
                    ]
                )
        if block.win_count_tau:
            tau = block.win_count_tau
            rows.append(["win-count τ-b ↑", *(_fmt_metric(tau.get(m)) for m in models)])
        status = block.units_by_status
        rows.append(
            [
                "units by status",
                *(
                    ", ".join(f"{k} {v}" for k, v in sorted(status.get(m, {}).items()))
                    for m in models
                ),
            ]
        )
        top.subsections.append(
            Section(f"{task}", [Table(["metric", *models], rows, "l" + "r" * len(models))])
        )
    disc_rows = []
    for task, block in bench.tasks.items():
        d = block.discriminability
        disc_rows.append(
            [
                task,
                fmt_num(d.spread if d else None),
                fmt_num(d.mean_interval_width if d else None),
                fmt_num(d.spread_over_width if d else None),
                f"{d.n_pairs_separated if d else 0}/{d.n_model_pairs if d else 0}",
            ]
        )
    disc = Section(
        "Discriminability per task",
        [
            Paragraph(
                "How far apart the task puts the models relative to its uncertainty: the spread "
                "of model scores (max − min), the mean interval width, their ratio, and the model "
                "pairs whose paired-difference interval excludes 0."
            ),
            Table(
                ["task", "spread", "mean interval width", "spread / width", "pairs separated"],
                disc_rows,
                "lrrrr",
            ),
        ],
    )
    out = [top, disc]
    wi = bench.kendall_w_interval
    if wi:
        out.append(
            Section(
                "Concordance of the task rankings",
                [
                    Paragraph(
                        f"Kendall's W over {', '.join(bench.kendall_w_tasks or [])}: "
                        f"{_fmt_metric(wi)} (percentile bootstrap interval)."
                    )
                ],
            )
        )
    return out


def bench_run_sections(run: RunData) -> list[Section]:
    """All sections of a bench run: per-task leaderboards, τ between tasks, then
    :func:`bench_extra_sections` (the registry entry for ``bench``)."""
    bench = getattr(run.record, "bench", None)
    if not isinstance(bench, BenchBlock):
        return []
    return bench_sections(run) + bench_extra_sections(bench)
