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

A judge is a ``dspy.Module``: ``judge(item)`` is its ``forward`` (``ajudge`` its ``aforward``),
so DSPy's tooling works on it — ``named_predictors()`` lists its programs' predictors,
``save(path)`` / ``load(path)`` write and restore their prompts and demonstrations, and
``deepcopy()`` / ``reset_copy()`` give independent judges. A copy shares the judge's LM (its
engine, its locks and its :class:`~attune_judge.lm.ModelHandle` stay as they are), adapter and
rubric by reference and copies everything else. The identity follows the programs: a judge whose
predictors' state differs from the one it was built with (after ``load``, or a ``reset_copy`` of
such a judge) has ``spec["program_state"]`` (a hash of that state) and so another ``judge_id``;
a judge as built keeps the id it always had.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import dspy

from attune_judge.data import JudgeItem, JudgeSpec, Judgment, LMSpec
from attune_judge.judges._base import (
    acall_program,
    call_program,
    refusal_judgment,
)
from attune_judge.lm import lm_response_format, lm_spec, make_adapter
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


_NEW_LOCK = {type(threading.Lock()): threading.Lock, type(threading.RLock()): threading.RLock}
_SHARED = ("lm", "adapter", "rubric")
"""Attributes a copy shares with its original (the LM above all: see the module docstring)."""


def state_fingerprint(state: Any) -> str:
    """First 16 hex of sha256 over a DSPy state (``dump_state()``) as canonical JSON."""
    blob = json.dumps(state, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


class JudgeModule(dspy.Module):
    """A judge as a ``dspy.Module`` (the model judges and the jury): ``forward`` is
    :meth:`judge`, and its identity (``spec``, ``judge_id``) follows its programs through
    ``load_state`` and ``reset_copy``. Subclasses define ``judge``, ``ajudge`` and
    ``refresh_identity``."""

    def forward(self, item: JudgeItem) -> Judgment:
        """:meth:`judge` (``judge_obj(item)`` runs it through DSPy's module call)."""
        return self.judge(item)

    async def aforward(self, item: JudgeItem) -> Judgment:
        """:meth:`ajudge` (``await judge_obj.acall(item)``)."""
        return await self.ajudge(item)

    def load_state(self, state: dict[str, Any], **kwargs: Any) -> Any:
        """DSPy's ``load_state``, then the identity follows the loaded programs."""
        super().load_state(state, **kwargs)
        self.refresh_identity()
        return self

    def reset_copy(self) -> Any:
        """DSPy's ``reset_copy`` (demonstrations cleared), with its identity refreshed."""
        new = super().reset_copy()
        new.refresh_identity()
        return new


class _JudgeMeta(type(dspy.Module)):  # type: ignore[misc]
    """Records the state of a judge's programs once it is fully built (for its identity)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        judge = super().__call__(*args, **kwargs)
        judge._built_spec = judge.spec
        judge.record_built()
        return judge


class JudgeBase(JudgeModule, metaclass=_JudgeMeta):
    """Shared set-up (rubric check, adapter, spec, judge_id) and the sync/async judge loop.

    Subclasses set ``program_name``, ``program_version`` and ``rubric_kinds``, call
    ``super().__init__(rubric, lm, options)`` and implement :meth:`_plan` and :meth:`_finish`.
    Their DSPy programs are attributes (or lists / dicts of them), so ``named_predictors()``
    finds them.
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

    def __init__(self, rubric: Rubric, lm: dspy.BaseLM, options: dict[str, Any]) -> None:
        super().__init__()
        self.check_rubric(rubric)
        self.rubric = rubric
        self.lm = lm
        self.adapter = make_adapter(lm_response_format(lm))
        self.spec = JudgeSpec(  # its identity: the judge id is its judge_id()
            program=self.program_name,
            program_version=self.program_version,
            rubric=rubric.spec(),
            lm=LMSpec.model_validate(lm_spec(lm)),
            options=options,
        )
        self.judge_id = self.spec.judge_id()

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
                f"item {item.item_id} has no reference reply; judge it without one: "
                "--no-reference (use_reference=False)",
            )
        return None

    # --- dspy.Module ---------------------------------------------------------------------

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """A copy with its own programs and state, sharing the LM, adapter and rubric."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            if name in _SHARED:
                new.__dict__[name] = value
            elif name == "callbacks":  # the same callback objects, in a list of its own
                new.__dict__[name] = list(value)
            elif type(value) in _NEW_LOCK:  # a lock of its own
                new.__dict__[name] = _NEW_LOCK[type(value)]()
            else:
                new.__dict__[name] = copy.deepcopy(value, memo)
        return new

    def record_built(self) -> None:
        """Note the state of every parameter not seen before as its state as built (a judge
        that builds a program later, as the behaviour judge, calls this once it is built)."""
        built = self.__dict__.setdefault("_built_states", {})
        for name, param in self.named_parameters():
            if name not in built:
                built[name] = state_fingerprint(param.dump_state())

    def refresh_identity(self) -> None:
        """Set ``spec`` and ``judge_id`` from the programs' current state (see module doc)."""
        built_spec = self.__dict__.get("_built_spec")
        if built_spec is None:  # still being built
            return
        built = self.__dict__.get("_built_states", {})
        changed = {}
        for name, param in self.named_parameters():
            now = state_fingerprint(param.dump_state())
            if built.get(name) != now:
                changed[name] = now
        self.spec = (
            built_spec.with_keys(program_state=state_fingerprint(changed))
            if changed
            else built_spec
        )
        self.judge_id = self.spec.judge_id()

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
