"""The bootstrap options of every command: one vocabulary, one set of defaults.

``--bootstrap`` / ``-B`` (replicates; ``--B`` is kept as an alias) and ``--ci`` (confidence
level), with the defaults of :mod:`attune_judge._bootstrap`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL, MAX_B, MIN_B

__all__ = ["DEFAULT_B", "DEFAULT_LEVEL", "BootstrapOption", "CiOption", "FileBootstrapOption"]

_NAMES = ("--bootstrap", "-B", "--B")

BootstrapOption = Annotated[
    int,
    typer.Option(
        *_NAMES,
        min=MIN_B,
        max=MAX_B,
        help=f"Bootstrap replicates B (default {DEFAULT_B}; {MIN_B} to {MAX_B:,}).",
    ),
]
"""Bootstrap replicates (default :data:`DEFAULT_B`)."""

FileBootstrapOption = Annotated[
    int | None,
    typer.Option(
        *_NAMES,
        "--bootstrap-replicates",
        min=MIN_B,
        max=MAX_B,
        help=f"Bootstrap replicates B (default: the file's; {MIN_B} to {MAX_B:,}).",
    ),
]
"""Bootstrap replicates where a study file may set them (``sensitivity``)."""

CiOption = Annotated[
    float, typer.Option("--ci", help="Confidence level of intervals and rank sets (0-1).")
]
"""Confidence level (default :data:`DEFAULT_LEVEL`)."""
