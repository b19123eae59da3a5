"""The ``attune-judge`` command line: a thin shell over library calls."""

from attune_judge.cli._main import app, main

__all__ = ["app", "main"]
