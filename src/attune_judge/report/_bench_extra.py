"""Bench-specific report sections: the ``bench`` entry of the report's section registry.

:func:`bench_run_sections` is what :func:`~attune_judge.report.build_report` draws for a
``bench`` summary: the leaderboard per task and the τ heatmap between task rankings
(``_study_sections.bench_sections``), then what only a bench run has: every metric per task
and model, the discriminability table, failures by status, and Kendall's W with its interval.
It reads the plain ``bench`` block that :func:`attune_judge.tasks.run_bench` stores in
``summary.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData
from attune_judge.report._study_sections import bench_sections

__all__ = ["bench_extra_sections", "bench_run_sections"]


def _fmt_metric(m: Mapping[str, Any] | None) -> str:
    if not m or m.get("estimate") is None:
        return "—"
    return f"{fmt_num(m['estimate'])} {fmt_interval(m.get('lower'), m.get('upper'))}"


def bench_extra_sections(bench: Mapping[str, Any]) -> list[Section]:
    """Sections: all metrics per task, discriminability, Kendall's W interval."""
    models: list[str] = list(bench.get("models") or [])
    tasks: Mapping[str, Any] = bench.get("tasks") or {}
    boot = bench.get("bootstrap") or {}
    top = Section("All task metrics")
    top.blocks.append(
        Note(
            f"{int(100 * boot.get('level', 0.95))}% intervals: paired cluster bootstrap over "
            f"{boot.get('n_conversations', '?')} conversations (B = {boot.get('B', '?')}, seed "
            f"{boot.get('seed', '?')}), one draw shared by every model and task."
        )
    )
    for task, block in tasks.items():
        rows = []
        for name, metric in (block.get("metrics") or {}).items():
            arrow = "↑" if metric.get("higher_is_better", True) else "↓"
            per = metric.get("models") or {}
            rows.append([f"{name} {arrow}", *(_fmt_metric(per.get(m)) for m in models)])
        for target, per in (block.get("pooled_binary") or {}).items():
            for stat in ("f1", "mcc"):
                rows.append(
                    [
                        f"{target} {stat} (pooled) ↑",
                        *(_fmt_metric((per.get(m) or {}).get(stat)) for m in models),
                    ]
                )
        if block.get("win_count_tau"):
            per = block["win_count_tau"]
            rows.append(["win-count τ-b ↑", *(_fmt_metric(per.get(m)) for m in models)])
        status = block.get("units_by_status") or {}
        rows.append(
            [
                "units by status",
                *(
                    ", ".join(f"{k} {v}" for k, v in sorted((status.get(m) or {}).items()))
                    for m in models
                ),
            ]
        )
        top.subsections.append(
            Section(f"{task}", [Table(["metric", *models], rows, "l" + "r" * len(models))])
        )
    disc_rows = []
    for task, block in tasks.items():
        d = block.get("discriminability") or {}
        disc_rows.append(
            [
                task,
                fmt_num(d.get("spread")),
                fmt_num(d.get("mean_interval_width")),
                fmt_num(d.get("spread_over_width")),
                f"{d.get('n_pairs_separated', 0)}/{d.get('n_model_pairs', 0)}",
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
    wi = bench.get("kendall_w_interval")
    if wi:
        out.append(
            Section(
                "Concordance of the task rankings",
                [
                    Paragraph(
                        f"Kendall's W over {', '.join(bench.get('kendall_w_tasks') or [])}: "
                        f"{_fmt_metric(wi)} (percentile bootstrap interval)."
                    )
                ],
            )
        )
    return out


def bench_run_sections(run: RunData) -> list[Section]:
    """All sections of a bench run: per-task leaderboards, τ between tasks, then
    :func:`bench_extra_sections` (the registry entry for ``bench``)."""
    return bench_sections(run) + bench_extra_sections(run.summary.get("bench") or {})
