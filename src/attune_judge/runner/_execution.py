"""Execution options every run shares: where work runs and how much is in flight.

``score``, ``generate``, ``sensitivity``, ``bench`` and ``validate`` take the same four
options with the same defaults (the CLI's ``--executor``, ``--workers``, ``--ray-address``,
``--max-concurrency``); :class:`ExecutionOptions` holds them and :meth:`~ExecutionOptions.
as_kwargs` spreads them into a run's config (``ScoreConfig``, ``BenchConfig``,
``SensitivityConfig``) or :func:`attune_judge.validate.validate_judge`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_WORKERS",
    "ExecutionOptions",
    "ExecutorName",
]

ExecutorName = Literal["thread", "process", "ray"]
DEFAULT_MAX_CONCURRENCY = 8
"""Judgments (bench: units) in flight at once."""
DEFAULT_WORKERS = 2
"""Worker processes (``process``) or Ray actors (``ray``)."""


class ExecutionOptions(BaseModel):
    """Where a run's work runs and how much of it is in flight."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    executor: ExecutorName = "thread"
    """``thread``: one process; ``process``: ``workers`` processes sharing
    ``max_concurrency``; ``ray``: ``workers`` Ray actors. Each worker builds its own judge."""
    workers: int = Field(default=DEFAULT_WORKERS, ge=1)
    """Worker processes or Ray actors."""
    ray_address: str | None = None
    """Ray cluster to join (``None``: ``RAY_ADDRESS``, else start or join a local one)."""
    max_concurrency: int = Field(default=DEFAULT_MAX_CONCURRENCY, ge=1)
    """Work in flight at once."""

    def as_kwargs(self) -> dict[str, Any]:
        """The four options as keyword arguments of a run config.

        >>> ExecutionOptions(workers=3).as_kwargs()
        {'executor': 'thread', 'workers': 3, 'ray_address': None, 'max_concurrency': 8}
        """
        return self.model_dump()
