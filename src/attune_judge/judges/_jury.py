"""A jury: several judges (usually one rubric, several models) combined per item.

``mean`` / ``median`` combine each score, the overall and the normalised score over the
members that answered; a pairwise jury's verdict follows the combined ``a_win`` (> 0.5: A,
< 0.5: B, 0.5: tie). ``majority`` takes the most frequent verdict (a tie between the top
verdicts gives ``tie``) and, per score, the most frequent value (the mean of the values tied
for most frequent). Every member's judgment is kept in ``details["members"]``.

Failures: if any member failed with a retryable LM error, the jury's judgment is that
``lm_error`` (retryable, with the longest ``retry_after_s`` a member's server sent; the runner
retries, and members' cached calls cost nothing). ``details["requests"]`` sums the members'
requests, so a jury counts every request sent on its behalf, as any judge does. Other
member failures are left out of the combination and counted in ``details["failed"]``; with
no member answering, the jury reports the first failure's status.

A jury is a ``dspy.Module`` like its members: ``named_predictors()`` lists theirs
(``members[0].program`` ...), ``save`` / ``load`` cover all of them, and its ``judge_id``
follows its members' after a ``load``.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from attune_judge.data import JudgeItem, JudgeSpec, Judgment, TokenUsage
from attune_judge.judges._judge_base import JudgeModule
from attune_judge.judges._pairwise import pair_options
from attune_judge.judges._protocol import Judge

__all__ = ["Jury", "JuryMethod", "combine"]

JuryMethod = Literal["mean", "median", "majority"]


def _majority_value(values: list[float]) -> float:
    counts = Counter(values)
    top = max(counts.values())
    tied = [v for v, n in counts.items() if n == top]
    return sum(tied) / len(tied)


def combine(values: Sequence[float], method: JuryMethod) -> float:
    """Combine member values.

    >>> combine([1, 2, 6], "mean"), combine([1, 2, 6], "median"), combine([1, 1, 6], "majority")
    (3.0, 2.0, 1.0)
    >>> combine([0, 1], "majority")  # tied: mean of the tied values
    0.5
    """
    data = [float(v) for v in values]
    if method == "mean":
        return sum(data) / len(data)
    if method == "median":
        return float(statistics.median(data))
    return _majority_value(data)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _verdict(members: list[Judgment], scores: dict[str, float], method: JuryMethod) -> str | None:
    verdicts = [m.verdict for m in members if m.verdict is not None]
    if not verdicts:
        return None
    if method == "majority":
        counts = Counter(verdicts)
        top = max(counts.values())
        tied = [v for v, n in counts.items() if n == top]
        return tied[0] if len(tied) == 1 else "tie"
    if "a_win" not in scores:
        return "inconsistent"
    a_win = scores["a_win"]
    return "A" if a_win > 0.5 else "B" if a_win < 0.5 else "tie"


class Jury(JudgeModule):
    """Combines member judges' judgments (see module docstring)."""

    program_name = "jury"

    def __init__(self, members: Sequence[Judge], method: JuryMethod = "mean") -> None:
        super().__init__()
        if not members:
            raise ValueError("a jury needs at least one member")
        self.members = list(members)
        self.method: JuryMethod = method
        self.refresh_identity()

    def refresh_identity(self) -> None:
        """``spec`` and ``judge_id`` from the members' (each refreshed first)."""
        for member in self.members:
            refresh = getattr(member, "refresh_identity", None)
            if refresh is not None:
                refresh()
        self.spec = JudgeSpec(
            program=self.program_name,
            program_version="1",
            method=self.method,
            members=[m.spec for m in self.members],
        )
        self.judge_id = self.spec.judge_id()

    def judge(self, item: JudgeItem) -> Judgment:
        """Ask every member, then combine."""
        started = time.perf_counter()
        return self._combine(item, [m.judge(item) for m in self.members], started)

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Async :meth:`judge` (members with ``ajudge`` run concurrently)."""
        import asyncio

        started = time.perf_counter()

        async def one(member: Judge) -> Judgment:
            ajudge = getattr(member, "ajudge", None)
            if ajudge is not None:
                return await ajudge(item)
            return await asyncio.to_thread(member.judge, item)

        results = await asyncio.gather(*(one(m) for m in self.members))
        return self._combine(item, list(results), started)

    def _combine(self, item: JudgeItem, results: list[Judgment], started: float) -> Judgment:
        usage = TokenUsage(
            prompt_tokens=sum(r.usage.prompt_tokens for r in results),
            completion_tokens=sum(r.usage.completion_tokens for r in results),
            calls=sum(r.usage.calls for r in results),
        )
        members = [
            {
                "judge_id": r.judge_id,
                "status": r.status,
                "scores": r.scores,
                "overall": r.overall,
                "normalized": r.normalized,
                "verdict": r.verdict,
                "error": r.error,
                "usage": r.usage.model_dump(),
            }
            for r in results
        ]
        base: dict[str, Any] = {
            "item_id": item.item_id,
            "judge_id": self.judge_id,
            "conversation_id": item.conversation_id,
            "candidate_model": item.candidate_model,
            "usage": usage,
        }
        ok = [r for r in results if r.status == "ok"]
        failed = [r for r in results if r.status != "ok"]
        details: dict[str, Any] = {"method": self.method, "members": members, "failed": len(failed)}
        sent = [_number(r.details.get("requests")) for r in results]
        if any(n is not None for n in sent):  # every request sent on the jury's behalf
            details["requests"] = int(sum(n for n in sent if n is not None))
        if "other" in item.metadata:  # a pair: what A and B are, as a pairwise judge keeps them
            details.update(pair_options(item))
        retryable = [r for r in failed if r.status == "lm_error" and r.details.get("retryable")]
        if retryable or not ok:
            first = (retryable or failed)[0]
            details["retryable"] = bool(retryable) or bool(first.details.get("retryable", False))
            waits = [_number(r.details.get("retry_after_s")) for r in retryable]
            if any(w is not None for w in waits):  # the longest wait a server asked for
                details["retry_after_s"] = max(w for w in waits if w is not None)
            return Judgment(
                **base,
                status=first.status,
                error=f"jury member {first.judge_id}: {first.error}",
                raw_output=first.raw_output,
                details=details,
                latency_s=time.perf_counter() - started,
            )
        keys = sorted({k for r in ok for k in r.scores})
        scores = {k: combine([r.scores[k] for r in ok if k in r.scores], self.method) for k in keys}
        overalls = [r.overall for r in ok if r.overall is not None]
        normals = [r.normalized for r in ok if r.normalized is not None]
        return Judgment(
            **base,
            scores=scores,
            overall=combine(overalls, self.method) if overalls else None,
            normalized=combine(normals, self.method) if normals else None,
            verdict=_verdict(ok, scores, self.method),
            details=details,
            latency_s=time.perf_counter() - started,
        )
