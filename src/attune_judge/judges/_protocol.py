"""The contract between judge programs and the runner."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from attune_judge.data import JudgeItem, JudgeSpec, Judgment

__all__ = ["AsyncJudge", "Judge"]


@runtime_checkable
class Judge(Protocol):
    """Anything that turns a JudgeItem into a Judgment.

    ``judge`` never raises for model-side problems: an LM failure becomes a Judgment with
    ``status="lm_error"`` (and ``details["retryable"] = True`` for rate limits, timeouts and
    connection errors, which the runner retries with backoff); an unparseable or out-of-range
    answer becomes ``status="parse_error"`` with ``raw_output`` kept. Exceptions are reserved
    for bugs and for configuration errors (``UserError``).
    """

    judge_id: str
    """Stable hash of ``spec``: a changed rubric, model or setting gives another id."""
    spec: JudgeSpec
    """Its identity: program name and version, rubric id/version/hash, lm string, decoding
    settings (:class:`~attune_judge.data.JudgeSpec`)."""

    def judge(self, item: JudgeItem) -> Judgment:
        """Judge one item."""
        ...


@runtime_checkable
class AsyncJudge(Judge, Protocol):
    """A judge that can also be awaited (every judge in this package is one).

    ``ajudge`` follows the same rules as ``judge`` and uses the LM's async engine, so many
    items can be in flight on one event loop.
    """

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Judge one item without blocking the event loop."""
        ...
