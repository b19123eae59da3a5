"""The bootstrap settings every command shares: one vocabulary, one set of defaults.

``B`` (bootstrap replicates; ``--bootstrap`` / ``-B`` on the command line), ``level`` (the
confidence level of intervals and rank sets; ``--ci``) and ``seed``. Every command and run
kind uses :data:`DEFAULT_B` and :data:`DEFAULT_LEVEL` unless told otherwise.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_B", "DEFAULT_LEVEL", "BootstrapSettings"]

DEFAULT_B = 2_000
"""Bootstrap replicates when none are given (every command, every run kind)."""

DEFAULT_LEVEL = 0.95
"""Confidence level of intervals and rank sets when none is given."""


class BootstrapSettings(BaseModel):
    """Replicates, confidence level and seed of the paired cluster bootstrap.

    Examples
    --------
    >>> BootstrapSettings()
    BootstrapSettings(B=2000, level=0.95, seed=0)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    B: int = Field(default=DEFAULT_B, ge=50)
    """Bootstrap replicates."""
    level: float = Field(default=DEFAULT_LEVEL, gt=0.0, lt=1.0)
    """Confidence level."""
    seed: int = 0
    """Seed of the cluster weights (and of simulated critical values)."""
