"""Behaviour items: yes / no per applicable item of a ``behaviour`` rubric.

Which items apply to a ``JudgeItem``: ``metadata["behaviour_items"]`` (a list of item ids,
as AttuneBench's applicable binary judgements); without it, every item of the rubric. Each
item becomes an output field typed ``Literal["yes", "no"]`` whose description is the item's
question (rubric text).

Scores are named with the view explicitly: ``B1:observed`` → 1.0 (yes) / 0.0 (no), the same
dimension as the participants' own answer (AttuneBench's ``observedBehavior``), so
``calibrate`` joins them directly. ``overall`` (= ``normalized``) is :func:`behaviour_score`:
the share of answers in the good direction, by each item's polarity in the rubric (a ``yes`` to
a negative behaviour counts against the reply; neutral items are left out). The raw answers are
in ``details["answers"]`` (item id → yes / no).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from attune_judge.data import JudgeItem, Judgment
from attune_judge.judges._base import (
    CallOutcome,
    failure_judgment,
    format_conversation,
    outcome_judgment,
    refusal_judgment,
)
from attune_judge.judges._judge_base import JudgeBase, Plan, ProgramCall
from attune_judge.lm import untrusted
from attune_judge.rubrics import Rubric

if TYPE_CHECKING:
    import dspy

__all__ = ["BehaviourJudge", "behaviour_score", "behaviour_signature"]

PROGRAM_VERSION = "2"
YesNo = Literal["yes", "no"]
VIEW = "observed"
"""The judge answers as an observer of the reply: did it do this? (``B1:observed``, the same
dimension as the participants' own answer to that question)."""


def behaviour_score(rubric: Rubric, answers: dict[str, str]) -> float | None:
    """Share of answers in the good direction: ``yes`` on a positive item, ``no`` on a
    negative one; neutral items are left out (``None`` when only neutral items were asked).

    Uses the rubric's weights when its aggregation is ``weighted``.

    >>> from attune_judge.rubrics import load_rubric
    >>> r = load_rubric("attunebench-behaviours")
    >>> behaviour_score(r, {"B1": "yes", "B20": "yes", "B13": "yes"})  # B20 counts against
    0.5
    """
    weighted = rubric.aggregation.method == "weighted"
    good = total = 0.0
    for item_id, answer in answers.items():
        polarity = rubric.criterion(item_id).polarity or "positive"
        if polarity == "neutral":
            continue
        weight = rubric.aggregation.weights[item_id] if weighted else 1.0
        total += weight
        good += weight * float((answer == "yes") == (polarity == "positive"))
    return good / total if total else None


def behaviour_signature(rubric: Rubric, item_ids: tuple[str, ...]) -> Any:
    """The DSPy signature asking ``item_ids`` of ``rubric`` about one reply."""
    import dspy

    fields: dict[str, Any] = {
        "conversation": (
            str,
            dspy.InputField(desc="The conversation so far; the last message is the person's"),
        ),
        "reply": (str, dspy.InputField(desc="The reply to evaluate")),
    }
    for item_id in item_ids:
        c = rubric.criterion(item_id)
        fields[item_id] = (YesNo, dspy.OutputField(desc=f"yes or no: {c.description}"))
    return dspy.make_signature(fields, rubric.instructions, "BehaviourJudgeSignature")


class BehaviourJudge(JudgeBase):
    """Answers the applicable behaviour items (yes/no) about a candidate reply.

    One DSPy program per set of items asked, in ``programs`` keyed by the item ids joined
    with commas (``programs['B1,B2']``); the program asking every item is built at once, the
    others when an item first asks for their set (or when a saved state names them).
    """

    program_name = "behaviour"
    program_version = PROGRAM_VERSION
    rubric_kinds = ("behaviour",)

    def __init__(self, rubric: Rubric, lm: dspy.BaseLM, *, reasoning: bool = False) -> None:
        super().__init__(rubric, lm, {"reasoning": reasoning})
        self.reasoning = reasoning
        self.programs: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.program_for(tuple(c.id for c in rubric.criteria))

    def program_for(self, item_ids: tuple[str, ...]) -> Any:
        """The DSPy module for this set of items (built once per set)."""
        import dspy

        key = ",".join(item_ids)
        with self._lock:
            if key not in self.programs:
                signature = behaviour_signature(self.rubric, item_ids)
                module = dspy.ChainOfThought if self.reasoning else dspy.Predict
                self.programs[key] = module(signature)
                self.record_built()
            return self.programs[key]

    def load_state(self, state: dict[str, Any], **kwargs: Any) -> Any:
        """Builds the programs the saved state names, then loads it (see the class doc)."""
        known = {c.id for c in self.rubric.criteria}
        for name in state:
            if not (name.startswith("programs['") and "']" in name):
                continue
            ids = tuple(name[len("programs['") : name.index("']")].split(","))
            unknown = [i for i in ids if i not in known]
            if unknown:
                raise ValueError(
                    f"saved state {name!r}: items {unknown} are not in rubric {self.rubric.id}"
                )
            self.program_for(ids)
        return super().load_state(state, **kwargs)

    def _plan(self, item: JudgeItem) -> Plan | Judgment:
        """One call asking the applicable items; ``state``: (items asked, unknown ids)."""
        known = [c.id for c in self.rubric.criteria]
        asked = item.metadata.get("behaviour_items")
        if asked is None:
            ids, unknown = tuple(known), []
        else:
            given = [str(i) for i in asked]
            unknown = [i for i in given if i not in known]
            ids = tuple(i for i in known if i in given)
            if not ids:
                return refusal_judgment(
                    item,
                    self.judge_id,
                    "no_items",
                    f"{item.item_id}: no applicable behaviour items",
                )
        return Plan([ProgramCall(self.program_for(ids), self._inputs(item))], (ids, unknown))

    def _finish(
        self, item: JudgeItem, plan: Plan, outcomes: Sequence[CallOutcome], started: float
    ) -> Judgment:
        item_ids, unknown = plan.state
        (outcome,) = outcomes
        details: dict[str, Any] = {"items": list(item_ids)}
        if unknown:
            details["unknown_items"] = unknown
        if outcome.status != "ok":
            return failure_judgment(item, self.judge_id, outcome, started, details=details)
        answers = {i: str(getattr(outcome.prediction, i)) for i in item_ids}
        scores = {f"{i}:{VIEW}": 1.0 if a == "yes" else 0.0 for i, a in answers.items()}
        overall = behaviour_score(self.rubric, answers)
        details["answers"] = answers
        details["view"] = VIEW
        details["polarity"] = {
            f"{i}:{VIEW}": self.rubric.criterion(i).polarity or "positive" for i in item_ids
        }
        return outcome_judgment(
            item,
            self.judge_id,
            started,
            outcome,
            details,
            self.reasoning,
            scores=scores,
            overall=overall,
            normalized=overall,
        )

    def _inputs(self, item: JudgeItem) -> dict[str, str]:
        return {
            "conversation": format_conversation(item.context),
            "reply": untrusted(item.candidate),
        }
