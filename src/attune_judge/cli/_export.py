"""``attune-judge export RUN --format csv|parquet|jsonl|inspect -o FILE`` (thin: ``export_run``)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


class FormatChoice(StrEnum):
    """Table formats."""

    csv = "csv"
    parquet = "parquet"
    jsonl = "jsonl"
    inspect = "inspect"


def export(
    run: Annotated[Path, typer.Argument(help="A run directory (score, bench, sensitivity).")],
    out: Annotated[
        Path, typer.Option("-o", "--out", help="The table file (inspect: a .eval/.json log).")
    ],
    fmt: Annotated[
        FormatChoice,
        typer.Option(
            "--format",
            help="csv, parquet or jsonl; inspect: an Inspect AI log that `inspect view` opens "
            "(needs the inspect extra).",
        ),
    ] = FormatChoice.csv,
) -> None:
    """Write a run's judgments as one long table: one row per item x criterion x judge, with
    model, conversation, turn, status, tokens and cost (a judgment's tokens, calls, cost and
    latency on its first row only, so column sums are the run's totals).
    Python: load_run(RUN).to_pandas(). With --format inspect: an Inspect log, one sample per
    judged item with each judge's score and explanation."""
    from attune_judge.runner import export_run

    n = export_run(run, out, fmt.value)
    print(f"{out}: {n} {'samples' if fmt is FormatChoice.inspect else 'rows'} ({fmt.value})")


def register(app: typer.Typer) -> None:
    """Add ``export`` to ``app``."""
    app.command("export")(export)
