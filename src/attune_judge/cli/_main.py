"""Entry point: builds the typer app from one module per area and maps user errors to exit 2.

Each area module (``_data``, ``_judge``, ...) exposes ``register(app)`` and keeps its heavy
imports inside the command functions, so ``attune-judge --help`` stays fast.
"""

from __future__ import annotations

import sys

import typer

from attune_judge.cli import (
    _bench,
    _calibrate,
    _data,
    _demo,
    _judge,
    _report,
    _score,
    _sensitivity,
)
from attune_judge.errors import UserError

__all__ = ["app", "main"]

app = typer.Typer(
    name="attune-judge",
    help="Score chatbot responses with LLM judges and measure how far the judges can be trusted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Score chatbot responses with LLM judges and measure how far the judges can be trusted."""


@app.command("version")
def version() -> None:
    """Print the attune-judge version."""
    from attune_judge import __version__

    print(__version__)


for _module in (_data, _judge, _score, _calibrate, _report, _bench, _sensitivity, _demo):
    _module.register(app)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a ``UserError`` becomes a short message on stderr and exit code 2."""
    try:
        app(args=argv)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
