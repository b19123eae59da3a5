"""Execution options every run shares: where work runs and how much is in flight.

``score``, ``generate``, ``sensitivity``, ``bench`` and ``validate`` take the same five
options with the same defaults (the CLI's ``--executor``, ``--workers``, ``--ray-address``,
``--max-concurrency``, ``--adaptive/--no-adaptive``); :class:`ExecutionOptions` holds them
and :meth:`~ExecutionOptions.as_kwargs` spreads them into a run's config (``ScoreConfig``,
``BenchConfig``, ``SensitivityConfig``) or :func:`attune_judge.validate.validate_judge`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_WORKERS",
    "ExecutionFields",
    "ExecutionOptions",
    "ExecutorName",
    "RunSettings",
]

ExecutorName = Literal["thread", "process", "ray"]
DEFAULT_MAX_CONCURRENCY = 8
"""Judgments (bench: units) in flight at once."""
DEFAULT_WORKERS = 2
"""Worker processes (``process``) or Ray actors (``ray``)."""


class ExecutionFields(BaseModel):
    """The four execution fields, declared once for every config that has them."""

    model_config = ConfigDict(extra="forbid")

    executor: ExecutorName = "thread"
    """``thread``: one process; ``process``: ``workers`` processes sharing
    ``max_concurrency`` (CPU-bound runs on fast engines); ``ray``: ``workers`` Ray actors on a
    local or multi-node cluster. Each worker builds its own judge."""
    workers: int = Field(default=DEFAULT_WORKERS, ge=1)
    """Worker processes or Ray actors."""
    ray_address: str | None = None
    """Ray cluster to join (``None``: ``RAY_ADDRESS``, else start or join a local one)."""
    max_concurrency: int = Field(default=DEFAULT_MAX_CONCURRENCY, ge=1)
    """Work in flight at once (judgments; bench: units)."""
    adaptive: bool = True
    """Lower the work in flight on rate limits (HTTP 429, ``Retry-After``) and raise it again
    as answers succeed, up to ``max_concurrency`` (``--no-adaptive``: fixed)."""


class ExecutionOptions(ExecutionFields):
    """Where a run's work runs and how much of it is in flight."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def as_kwargs(self) -> dict[str, Any]:
        """The four options as keyword arguments of a run config.

        >>> ExecutionOptions(workers=3).as_kwargs()  # doctest: +NORMALIZE_WHITESPACE
        {'executor': 'thread', 'workers': 3, 'ray_address': None, 'max_concurrency': 8,
         'adaptive': True}
        """
        return self.model_dump()


class RunSettings(ExecutionFields):
    """What every judging run's config shares (``ScoreConfig``, ``SensitivityConfig``): the
    execution fields, the failure budget, retries, the seed and the progress display."""

    max_failure_rate: float = Field(default=0.25, ge=0.0, le=1.0)
    """Stop when more than this share of judgments fail (after ``min_attempts``)."""
    min_attempts: int = Field(default=20, ge=1)
    """Judgments to see before the failure budget applies."""
    max_retries: int = Field(default=5, ge=0)
    """Retries of a rate-limited or timed-out judgment."""
    parse_retries: int = Field(default=1, ge=0)
    """Times a ``parse_error`` is asked again (its answer is evicted from the request cache)."""
    retry_base_delay_s: float = Field(default=1.0, ge=0.0)
    """First backoff (doubles per retry, with jitter, capped at 60 s)."""
    seed: int = 0
    """Seed of the retry jitter, (where supported) the judge model and the bootstrap."""
    quiet: bool = False
    """No progress bar."""
    retry_failed: bool = False
    """Judge again only the failed judgments (``lm_error``, ``parse_error``) of the existing
    run directory (``--retry-failed``); a plain rerun asks only the ``lm_error`` ones and what
    was never judged."""
