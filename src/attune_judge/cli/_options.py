"""Options, parsing and printing shared by the run commands (score, sensitivity, bench).

Each ``Annotated`` alias is one typer option with its help text, so a command declares
``quiet: QuietOption = False`` instead of repeating the block. Nothing heavy is imported here.
"""

from __future__ import annotations

import logging
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Protocol

import typer

__all__ = [
    "ApiBaseOption",
    "CandidatesOption",
    "ExecutorKind",
    "ExecutorOption",
    "MaxFailureRateOption",
    "MaxRetriesOption",
    "ModelsOption",
    "QuietOption",
    "RayAddressOption",
    "RunDirOption",
    "WorkersOption",
    "exit_if_stopped",
    "interval_cell",
    "setup_logging",
    "split_csv",
]

RunDirOption = Annotated[
    Path, typer.Option("-o", "--out", help="Run directory (resumed if it exists).")
]
CandidatesOption = Annotated[
    Path | None,
    typer.Option(help="Candidates JSONL (conversation_id, turn, model, response)."),
]
ModelsOption = Annotated[
    str | None,
    typer.Option(help="Comma-separated models (default: all / the pseudo-models)."),
]
MaxFailureRateOption = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="Stop (exit 3) above this share of failures.")
]
MaxRetriesOption = Annotated[int, typer.Option(min=0, help="Retries of rate limits/timeouts.")]
ApiBaseOption = Annotated[
    str | None, typer.Option(help="OpenAI-compatible server URL.", envvar="ATTUNE_API_BASE")
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


class ExecutorKind(StrEnum):
    """Where judgments run: threads of this process, worker processes, or Ray actors."""

    thread = "thread"
    process = "process"
    ray = "ray"


ExecutorOption = Annotated[
    ExecutorKind,
    typer.Option(
        help="thread: one process; process: --workers processes share --max-concurrency "
        "(CPU-bound runs on fast models); ray: --workers Ray actors on a local or multi-node "
        "cluster (pip install 'attune-judge[ray]'). Each worker loads its own judge/model."
    ),
]
WorkersOption = Annotated[
    int, typer.Option(min=1, help="Worker processes / Ray actors of --executor process|ray.")
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        help="Ray cluster to join (host:6379 or ray://host:10001); default: RAY_ADDRESS, "
        "else a cluster started here by `ray start`, else a new local one.",
        envvar="RAY_ADDRESS",
    ),
]


class _Stoppable(Protocol):
    @property
    def stopped(self) -> Any: ...

    @property
    def exit_code(self) -> int: ...


def setup_logging(quiet: bool) -> None:
    """Warnings (errors only with ``--quiet``) to stderr as ``LEVEL: message``."""
    logging.basicConfig(
        level=logging.ERROR if quiet else logging.WARNING,
        format="%(levelname)s: %(message)s",
        stream=sys.stderr,
    )


def split_csv(value: str | None) -> list[str] | None:
    """``"a, b,,c"`` → ``["a", "b", "c"]``; ``None`` for no value or only commas."""
    if value is None:
        return None
    parts = [v.strip() for v in value.split(",") if v.strip()]
    return parts or None


def interval_cell(value: float | None, lower: float | None, upper: float | None) -> str:
    """``0.512 [0.401, 0.623]``, ``0.512`` without an interval, ``—`` without a value."""
    if value is None:
        return "—"
    if lower is None or upper is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{lower:.3f}, {upper:.3f}]"


def exit_if_stopped(result: _Stoppable) -> None:
    """A run that stopped early (failure budget, ...) prints why and exits with its code."""
    if result.stopped:
        print(f"error: run stopped: {result.stopped}", file=sys.stderr)
        raise typer.Exit(result.exit_code)
