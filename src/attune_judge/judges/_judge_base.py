"""The base class of the model judges: shared set-up and one plan → call(s) → finish loop.

A judge subclass says which rubric kinds it takes (``rubric_kinds``), how it plans an item
(:meth:`JudgeBase._plan`: the calls to make, or a refusal judgment), and how it turns the call
outcomes into a judgment (:meth:`JudgeBase._finish`). :meth:`JudgeBase.judge` and
:meth:`JudgeBase.ajudge` are written once here: the sync one makes the calls one after another;
the async one too, or all at once for a judge with ``concurrent_calls`` (pairwise: its two
orders). A judge with ``stop_after_lm_error`` stops at the first call that failed with an LM
error (per-criterion: the other criteria would fail alike and cost requests).

By default a call is a :class:`ProgramCall` run through :func:`call_program` under the judge's
LM and JSON adapter; a judge that calls the LM directly (per-criterion) overrides
:meth:`JudgeBase._call` and :meth:`JudgeBase._acall`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from attune_judge.data import JudgeItem, Judgment
from attune_judge.judges._base import (
    acall_program,
    call_program,
    hash_spec,
    judge_spec,
    refusal_judgment,
)
from attune_judge.lm import lm_response_format, make_adapter
from attune_judge.rubrics import Rubric

__all__ = ["JudgeBase", "Plan", "ProgramCall"]


@dataclass(frozen=True)
class ProgramCall:
    """One DSPy program call: the module and its input fields."""

    program: Any
    inputs: dict[str, str]


@dataclass(frozen=True)
class Plan:
    """The calls one item needs, and what :meth:`JudgeBase._finish` needs besides."""

    calls: Sequence[Any]
    state: Any = None
    """Anything the judge planned beside the calls (behaviour: the items asked)."""


class JudgeBase:
    """Shared set-up (rubric check, adapter, spec, judge_id) and the sync/async judge loop.

    Subclasses set ``program_name``, ``program_version`` and ``rubric_kinds``, call
    ``super().__init__(rubric, lm, options)`` and implement :meth:`_plan` and :meth:`_finish`.
    """

    program_name: ClassVar[str]
    program_version: ClassVar[str]
    rubric_kinds: ClassVar[tuple[str, ...]]
    concurrent_calls: ClassVar[bool] = False
    """``ajudge`` runs the planned calls concurrently."""
    stop_after_lm_error: ClassVar[bool] = False
    """Stop at the first call that failed with an LM error."""
    use_reference: bool = False
    """The judge is shown the reference reply (an item without one is refused)."""

    def __init__(self, rubric: Rubric, lm: Any, options: dict[str, Any]) -> None:
        self.check_rubric(rubric)
        self.rubric = rubric
        self.lm = lm
        self.adapter = make_adapter(lm_response_format(lm))
        self.spec = judge_spec(self.program_name, self.program_version, rubric, lm, options)
        self.judge_id = hash_spec(self.spec)

    @classmethod
    def check_rubric(cls, rubric: Rubric) -> None:
        """Raise ``ValueError`` unless ``rubric`` is of a kind this judge takes."""
        if rubric.kind not in cls.rubric_kinds:
            kinds = " or ".join(cls.rubric_kinds)
            raise ValueError(f"{cls.__name__} needs a {kinds} rubric, got {rubric.kind!r}")

    # --- what a subclass says ------------------------------------------------------------

    def _plan(self, item: JudgeItem) -> Plan | Judgment:
        """The calls ``item`` needs, or a judgment refusing it."""
        raise NotImplementedError

    def _finish(
        self, item: JudgeItem, plan: Plan, outcomes: Sequence[Any], started: float
    ) -> Judgment:
        """The judgment from the outcomes of the calls made (in plan order)."""
        raise NotImplementedError

    def _call(self, item: JudgeItem, call: Any) -> Any:
        """Make one planned call (default: a :class:`ProgramCall` via ``call_program``)."""
        return call_program(call.program, self.lm, self.adapter, **call.inputs)

    async def _acall(self, item: JudgeItem, call: Any) -> Any:
        """Async :meth:`_call`."""
        return await acall_program(call.program, self.lm, self.adapter, **call.inputs)

    def _refuse_without_reference(self, item: JudgeItem) -> Judgment | None:
        """The refusal of an item without a reference by a judge shown the reference."""
        if self.use_reference and not item.reference:
            return refusal_judgment(
                item,
                self.judge_id,
                "no_reference",
                f"item {item.item_id} has no reference; use use_reference=False to judge it",
            )
        return None

    # --- the loop ------------------------------------------------------------------------

    def _stops(self, outcome: Any) -> bool:
        return self.stop_after_lm_error and getattr(outcome, "status", None) == "lm_error"

    def judge(self, item: JudgeItem) -> Judgment:
        """Judge one item (never raises for model-side failures)."""
        started = time.perf_counter()
        plan = self._plan(item)
        if isinstance(plan, Judgment):
            return plan
        outcomes = []
        for call in plan.calls:
            outcomes.append(self._call(item, call))
            if self._stops(outcomes[-1]):
                break
        return self._finish(item, plan, outcomes, started)

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Async :meth:`judge` (the LM's async engine)."""
        started = time.perf_counter()
        plan = self._plan(item)
        if isinstance(plan, Judgment):
            return plan
        if self.concurrent_calls:
            outcomes = list(await asyncio.gather(*(self._acall(item, c) for c in plan.calls)))
        else:
            outcomes = []
            for call in plan.calls:
                outcomes.append(await self._acall(item, call))
                if self._stops(outcomes[-1]):
                    break
        return self._finish(item, plan, outcomes, started)
