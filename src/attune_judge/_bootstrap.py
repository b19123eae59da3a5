"""The bootstrap settings every command shares: one vocabulary, one set of defaults.

``B`` (bootstrap replicates; ``--bootstrap`` / ``-B`` on the command line), ``level`` (the
confidence level of intervals and rank sets; ``--ci``) and ``seed``. Every command and run
kind uses :data:`DEFAULT_B` and :data:`DEFAULT_LEVEL` unless told otherwise.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["DEFAULT_B", "DEFAULT_LEVEL", "MAX_B", "MIN_B", "Replicates"]

DEFAULT_B = 2_000
"""Bootstrap replicates when none are given (every command, every run kind)."""

MIN_B = 50
"""Fewest replicates any command or configuration accepts."""

MAX_B = 100_000
"""Most replicates any command or configuration accepts: the Monte-Carlo error of a 95%
interval's end is already about 1% of its half-width at 10,000, and the (B × conversations)
weights matrix of 10⁹ replicates would not fit in memory (a MemoryError after minutes)."""

Replicates = Annotated[int, Field(ge=MIN_B, le=MAX_B)]
"""A bootstrap replicate count in a configuration (:data:`MIN_B` to :data:`MAX_B`)."""

DEFAULT_LEVEL = 0.95
"""Confidence level of intervals and rank sets when none is given."""
