"""What a run invocation returns (:class:`RunResult`) and when it stops on failures
(:class:`FailureBudget`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, SerializeAsAny

from attune_judge.runs import RunSummary

__all__ = ["EXIT_FAILURE_BUDGET", "FAILED_STATUSES", "FailureBudget", "RunResult"]

EXIT_FAILURE_BUDGET = 3
"""Exit code of a run stopped because too many judgments failed (user errors exit 2)."""


FAILED_STATUSES = ("lm_error", "parse_error", "refused")
"""Statuses that count against the failure budget: every judgment that is not ``ok``."""


@dataclass(frozen=True)
class FailureBudget:
    """Stop a run when, after ``min_attempts`` judgments in this invocation, the share of
    failed ones (``lm_error`` after retries, ``parse_error``, ``refused``) exceeds
    ``max_failure_rate``. A run that ends with fewer than ``min_attempts`` judgments is held to
    the same rate at its end (a small run is not exempt).

    ``refused`` counts: an item the judge cannot judge (no reference, say) is a judgment that
    gives no score, whatever the reason.
    """

    max_failure_rate: float = 0.25
    """Largest tolerated share of failed judgments (0–1; 1 never stops)."""
    min_attempts: int = 20
    """Judgments to see before the rate is trusted."""

    def exceeded(self, attempts: int, failures: int) -> bool:
        """Whether the run must stop."""
        return attempts >= self.min_attempts and failures > self.max_failure_rate * attempts

    def exceeded_at_end(self, attempts: int, failures: int) -> bool:
        """Whether a finished invocation broke the budget (any number of judgments)."""
        return attempts > 0 and failures > self.max_failure_rate * attempts

    def message(self, attempts: int, failures: int, counts: Mapping[str, int]) -> str:
        """Why the budget stopped the run."""
        return (
            f"failure budget exceeded: {failures} of {attempts} judgments failed "
            f"({dict(counts)}), above --max-failure-rate {self.max_failure_rate:g}; "
            "completed judgments are kept, fix the cause and run the same command again"
        )


class RunResult(BaseModel):
    """What a run invocation did (the run directory holds the full record)."""

    model_config = ConfigDict(extra="forbid")

    run_dir: Path
    """The run directory."""
    n_tasks: int
    """Planned (item, judge) tasks."""
    n_skipped: int
    """Tasks already finished in the directory before this invocation."""
    n_run: int
    """Judgments made by this invocation (retries of one task count once)."""
    n_by_status: dict[str, int]
    """This invocation's judgments by status."""
    stopped: str | None = None
    """Why the run stopped before finishing its plan (failure budget, cost, no ok judgment),
    if it did. Not logged by the runner: the caller reports it, once (the CLI's
    ``exit_if_stopped``)."""
    torn_line_dropped: bool = False
    """Whether a torn last line of ``judgments.jsonl`` was cut off at the start."""
    wall_time_s: float
    """Wall time of this invocation."""
    retried: dict[str, int] = {}
    """``--retry-failed``: the failed judgments judged again, by their old status."""
    summary: SerializeAsAny[RunSummary]
    """``summary.json``, typed (a :class:`~attune_judge.runs.ScoreSummary`, or a study's
    summary such as :class:`~attune_judge.runs.BenchSummary`)."""

    @property
    def complete(self) -> bool:
        """Every planned task has a judgment."""
        run = getattr(self.summary, "run", None)
        return bool(run is not None and run.complete)

    @property
    def exit_code(self) -> int:
        """0, or :data:`EXIT_FAILURE_BUDGET` when the run stopped early, broke the failure
        budget or has no ok judgment at all."""
        return EXIT_FAILURE_BUDGET if self.stopped else 0
