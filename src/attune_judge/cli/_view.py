"""CLI: ``attune-judge view RUN``: read every judgment of a run in the browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def view(
    run: Annotated[
        Path,
        typer.Argument(
            help="A run directory (score, bench, sensitivity, validate -o, align, the demo's "
            "folder): every judgments.jsonl in it or up to two folders down."
        ),
    ],
    human: Annotated[
        Path | None,
        typer.Option(
            help="People's labels (Rating or Preference JSONL, e.g. `annotate export`); a "
            "validate run joins its set's people without it."
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8766,
) -> None:
    """Serve a read-only page of a run's judgments (filter, sort, open one; where the judge and
    the people disagree most); Ctrl-C stops."""
    from attune_judge.annotate import view as serve_view

    serve_view(run, human=human, host=host, port=port)


def register(app: typer.Typer) -> None:
    """Add the ``view`` command to app."""
    app.command("view")(view)
