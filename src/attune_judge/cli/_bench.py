"""``attune-judge bench``: AttuneBench evaluated-model tasks (thin: parse, run, print)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attune_judge.cli._options import (
    JuryChoice,
    JuryOption,
    MaxFailureRateOption,
    QuietOption,
    RetryFailedOption,
    RunDirOption,
    SeedOption,
    exit_if_stopped,
    setup_logging,
    write_run_report,
)
from attune_judge.cli._shared import EXECUTION, MODEL, SharedOptions, shared_options
from attune_judge.cli._stats import DEFAULT_B, BootstrapOption
from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.calibration import Metric
    from attune_judge.runs import RunSummary

__all__ = ["register"]

_TASK_NAMES = ("drafting", "emotion", "behaviour", "preference", "conversation")


def _tasks(value: str) -> list[str]:
    tasks = [t.strip() for t in value.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in _TASK_NAMES]
    if unknown or not tasks:
        raise UserError(
            f"--tasks: unknown task(s) {', '.join(map(repr, unknown)) or '(none given)'}",
            [f"choose from {', '.join(_TASK_NAMES)}"],
        )
    return list(dict.fromkeys(tasks))


def _jury(choice: JuryChoice) -> Any:
    if choice is JuryChoice.none:
        raise UserError("bench: --jury none is not supported; use mean, median or majority")
    return choice.value


def _cell(metric: Metric | None) -> str:
    from attune_judge.calibration import fmt_estimate

    if metric is None:
        return "—"
    return fmt_estimate(metric.estimate, metric.lower, metric.upper)


def _print_summary(summary: RunSummary, run_dir: Path) -> None:
    from attune_judge.runs import BenchSummary, PanelBlock

    if not isinstance(summary, BenchSummary):  # stopped before its analysis: no tables
        return
    bench, run, boot = summary.bench, summary.run, summary.bench.bootstrap
    print(
        f"{run_dir}: {run.n_tasks} units, complete: {'yes' if run.complete else 'no'}; "
        f"{boot.n_conversations} conversations, "
        f"{int(100 * boot.level)}% paired cluster-bootstrap intervals"
    )
    for task, block in bench.tasks.items():
        print(f"{task} ({block.primary_metric}):")
        board = block.leaderboard
        for w in board.warnings if board else []:
            print(f"  warning: {w}")
        for row in board.rows if board else []:
            # the one rule for claims: no rank or rank set without one (below 10
            # conversations: none, the warning above says why)
            claim = board is not None and board.rank_claims and row.no_rank_claim is None
            rank_set = row.rank_set_simultaneous if claim else None
            rs = f" rank set {rank_set[0]}-{rank_set[1]}" if rank_set else ""
            print(f"  {f'{row.rank}.' if claim else '—':>3} {row.model:<28} {_cell(row.score)}{rs}")
    for p in summary.panels:
        if isinstance(p, PanelBlock) and p.alpha:
            print(f"jury of draft judges: Krippendorff's alpha = {_cell(p.alpha)}")
    for tau in bench.taus or []:
        print(f"tau({bench.against}, {tau.label}) = {_cell(tau.tau)}")
    if bench.kendall_w:
        print(f"Kendall's W = {_cell(bench.kendall_w_interval)}")
    for f in summary.degenerate:
        print(f"warning: degenerate drafting judge {f.judge_id}: {f.message}", file=sys.stderr)


@shared_options(MODEL, EXECUTION)
def bench(
    data: Annotated[Path, typer.Argument(help="AttuneBench data (folder/.json/.jsonl).")],
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            "-m",
            help="Evaluated model, repeatable: MODEL or MODEL@temperature=0.7,seed=1.",
        ),
    ],
    out: RunDirOption,
    judge_lm: Annotated[
        list[str] | None,
        typer.Option(
            "--judge-lm",
            "--lm",
            help="Model of the drafting judges (repeat for a jury: --judge-lm A --judge-lm B).",
            envvar="ATTUNE_LM",
        ),
    ] = None,
    jury: JuryOption = JuryChoice.mean,
    tasks: Annotated[
        str, typer.Option(help="Comma-separated tasks.")
    ] = "drafting,emotion,behaviour,preference,conversation",
    seed: SeedOption = 0,
    max_conversations: Annotated[
        int | None, typer.Option(min=1, help="Use only the first N conversations.")
    ] = None,
    bootstrap: BootstrapOption = DEFAULT_B,
    max_failure_rate: MaxFailureRateOption = 0.25,
    quiet: QuietOption = False,
    retry_failed: RetryFailedOption = False,
    *,
    opts: SharedOptions,
) -> None:
    """Run the AttuneBench tasks for every --model and rank the models per task."""
    from attune_judge.tasks import BenchConfig, run_bench

    setup_logging(quiet)
    config = BenchConfig(
        data=data,
        models=list(model),
        judge_lm=judge_lm[0] if judge_lm and len(judge_lm) == 1 else (judge_lm or "local"),
        jury=_jury(jury),
        out=out,
        tasks=_tasks(tasks),
        seed=seed,
        lm_settings=opts.model(judge_lm),
        max_conversations=max_conversations,
        B=bootstrap,
        max_failure_rate=max_failure_rate,
        quiet=quiet,
        retry_failed=retry_failed,
        **opts.execution(),
    )
    result = run_bench(config)
    write_run_report(result.run_dir)
    _print_summary(result.summary, result.run_dir)
    exit_if_stopped(result)


def register(app: typer.Typer) -> None:
    """Add ``bench`` to app."""
    app.command("bench")(bench)
