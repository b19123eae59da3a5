"""Reference-graded scoring: an integer score per rubric criterion, against a reference reply.

The signature is built from the rubric: its instructions are the rubric's ``instructions``
(our text, never conversation text); the conversation, the candidate, the reference and the
rendered criteria are input fields; each criterion is an output field typed
``Literal[min, ..., max]`` (so its JSON schema is an integer enum and an out-of-scale answer
fails to parse), followed by a short ``rationale``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from attune_judge.data import JudgeItem, Judgment
from attune_judge.judges._base import (
    CallOutcome,
    failure_judgment,
    format_conversation,
    outcome_judgment,
)
from attune_judge.judges._judge_base import JudgeBase, Plan, ProgramCall
from attune_judge.lm import untrusted
from attune_judge.rubrics import Rubric

if TYPE_CHECKING:
    import dspy

__all__ = ["ReferenceJudge", "reference_signature", "render_criteria"]

PROGRAM_VERSION = "1"


def render_criteria(rubric: Rubric) -> str:
    """The rubric's criteria, scales and anchors as text (an input field of the judge)."""
    blocks = []
    for c in rubric.criteria:
        scale = rubric.scale_of(c.id)
        lines = [f"- {c.id} ({c.name}), integer {scale.min}-{scale.max}: {c.description}"]
        lines += [f"    {level} = {text}" for level, text in sorted(c.anchors.items())]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def reference_signature(rubric: Rubric, *, use_reference: bool = True) -> Any:
    """The DSPy signature of a reference-graded judge for ``rubric``."""
    import dspy

    fields: dict[str, Any] = {
        "criteria": (str, dspy.InputField(desc="What to score; each criterion with its levels")),
        "conversation": (
            str,
            dspy.InputField(desc="The conversation so far; the last message is the person's"),
        ),
        "candidate_reply": (str, dspy.InputField(desc="The reply to evaluate")),
    }
    if use_reference:
        fields["reference_reply"] = (
            str,
            dspy.InputField(desc="The reply the person edited themselves and preferred"),
        )
    for c in rubric.criteria:
        scale = rubric.scale_of(c.id)
        levels = tuple(scale.levels)
        fields[c.id] = (
            Literal[levels],
            dspy.OutputField(desc=f"{c.name}: an integer from {scale.min} to {scale.max}"),
        )
    fields["rationale"] = (str, dspy.OutputField(desc="One or two sentences explaining the scores"))
    name = "ReferenceJudgeSignature" if use_reference else "NoReferenceJudgeSignature"
    return dspy.make_signature(fields, rubric.instructions, name)


class ReferenceJudge(JudgeBase):
    """Scores a candidate on every criterion of a ``reference`` rubric.

    Parameters
    ----------
    rubric
        A rubric of kind ``reference``.
    lm
        A ``dspy.LM`` (from :func:`attune_judge.lm.resolve_lm` or a test engine).
    use_reference
        Show the participant-preferred reference to the judge (``False``: reference withheld).
    reasoning
        ``ChainOfThought`` (a ``reasoning`` field before the scores) instead of ``Predict``.
    """

    program_name = "reference"
    program_version = PROGRAM_VERSION
    rubric_kinds = ("reference",)

    def __init__(
        self,
        rubric: Rubric,
        lm: dspy.BaseLM,
        *,
        use_reference: bool = True,
        reasoning: bool = False,
    ) -> None:
        import dspy

        super().__init__(rubric, lm, {"use_reference": use_reference, "reasoning": reasoning})
        self.use_reference = use_reference
        self.reasoning = reasoning
        self.signature = reference_signature(rubric, use_reference=use_reference)
        self.program = (dspy.ChainOfThought if reasoning else dspy.Predict)(self.signature)
        self._criteria_text = render_criteria(rubric)

    def _inputs(self, item: JudgeItem) -> dict[str, str]:
        inputs = {
            "criteria": self._criteria_text,
            "conversation": format_conversation(item.context),
            "candidate_reply": untrusted(item.candidate),
        }
        if self.use_reference:
            inputs["reference_reply"] = untrusted(item.reference or "")
        return inputs

    def _plan(self, item: JudgeItem) -> Plan | Judgment:
        refused = self._refuse_without_reference(item)
        if refused is not None:
            return refused
        return Plan([ProgramCall(self.program, self._inputs(item))])

    def _finish(
        self, item: JudgeItem, plan: Plan, outcomes: Sequence[CallOutcome], started: float
    ) -> Judgment:
        (outcome,) = outcomes
        if outcome.status != "ok":
            return failure_judgment(item, self.judge_id, outcome, started)
        prediction = outcome.prediction
        scores = {c.id: float(getattr(prediction, c.id)) for c in self.rubric.criteria}
        overall, normalized = self.rubric.aggregate(scores)
        return outcome_judgment(
            item,
            self.judge_id,
            started,
            outcome,
            {},
            self.reasoning,
            scores=scores,
            overall=overall,
            normalized=normalized,
            rationale=str(getattr(prediction, "rationale", "") or ""),
        )
