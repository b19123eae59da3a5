"""The bootstrap settings every command shares: one vocabulary, one set of defaults.

``B`` (bootstrap replicates; ``--bootstrap`` / ``-B`` on the command line), ``level`` (the
confidence level of intervals and rank sets; ``--ci``) and ``seed``. Every command and run
kind uses :data:`DEFAULT_B` and :data:`DEFAULT_LEVEL` unless told otherwise.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["DEFAULT_B", "DEFAULT_LEVEL", "MIN_B", "Replicates"]

DEFAULT_B = 2_000
"""Bootstrap replicates when none are given (every command, every run kind)."""

MIN_B = 50
"""Fewest replicates any command or configuration accepts."""

Replicates = Annotated[int, Field(ge=MIN_B)]
"""A bootstrap replicate count in a configuration (at least :data:`MIN_B`)."""

DEFAULT_LEVEL = 0.95
"""Confidence level of intervals and rank sets when none is given."""
