"""Pairwise preference, always asked in both orders and reconciled.

Representation of a pair as a ``JudgeItem``: ``candidate`` is response A's text,
``metadata["other"]`` is response B's text, ``metadata["question"]`` the question id
(``general``, ``PW1``..``PW15`` from the rubric, or ``custom:<question text>``; default
``general``), and optionally ``metadata["option_a"]`` / ``metadata["option_b"]`` the labels
(e.g. ``original`` / ``human``). :func:`pairwise_item` builds one.

Reconciliation of the verdict in order (A, B) with the verdict in order (B, A) mapped back:
both agree → that verdict; opposite winners → ``inconsistent``; one ``tie`` and one winner →
``tie``. ``scores["a_win"]`` is 1 (A), 0.5 (tie) or 0 (B); absent when inconsistent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from attune_judge.data import ChatMessage, JudgeItem, Judgment
from attune_judge.judges._base import (
    CallOutcome,
    add_usage,
    failure_judgment,
    format_conversation,
    item_judgment,
    refusal_judgment,
)
from attune_judge.judges._judge_base import JudgeBase, Plan, ProgramCall
from attune_judge.lm import untrusted
from attune_judge.rubrics import Rubric

if TYPE_CHECKING:
    import dspy

__all__ = ["PairwiseJudge", "pairwise_item", "pairwise_signature", "reconcile"]

PROGRAM_VERSION = "1"
Verdict = Literal["A", "B", "tie"]
_SWAP = {"A": "B", "B": "A", "tie": "tie"}


def reconcile(first: str, second_swapped_back: str) -> str:
    """Combine the two orders' verdicts (the second already mapped back to the first order).

    >>> reconcile("A", "A"), reconcile("A", "B"), reconcile("tie", "B"), reconcile("tie", "tie")
    ('A', 'inconsistent', 'tie', 'tie')
    """
    if first == second_swapped_back:
        return first
    if "tie" in (first, second_swapped_back):
        return "tie"
    return "inconsistent"


def pairwise_item(
    item_id: str,
    conversation_id: str,
    context: list[ChatMessage],
    text_a: str,
    text_b: str,
    *,
    question: str = "general",
    option_a: str = "A",
    option_b: str = "B",
    turn: int | None = None,
    metadata: dict[str, Any] | None = None,
) -> JudgeItem:
    """A ``JudgeItem`` for a pairwise comparison (see the module docstring)."""
    meta = {
        **(metadata or {}),
        "other": text_b,
        "question": question,
        "option_a": option_a,
        "option_b": option_b,
    }
    return JudgeItem(
        item_id=item_id,
        conversation_id=conversation_id,
        turn=turn,
        context=context,
        candidate=text_a,
        candidate_model=option_a,
        metadata=meta,
    )


def pairwise_signature() -> Any:
    """The DSPy signature of one pairwise comparison (instructions set per rubric)."""
    import dspy

    class PairwiseSignature(dspy.Signature):
        """Compare two replies, A and B, and answer the question: A, B or tie."""

        conversation: str = dspy.InputField(
            desc="The conversation so far; the last message is the person's"
        )
        question: str = dspy.InputField(desc="The question to answer about the two replies")
        reply_a: str = dspy.InputField(desc="Reply A")
        reply_b: str = dspy.InputField(desc="Reply B")
        verdict: Verdict = dspy.OutputField(desc="A, B or tie")
        rationale: str = dspy.OutputField(desc="One sentence explaining the choice")

    return PairwiseSignature


class PairwiseJudge(JudgeBase):
    """A/B preference for a ``pairwise`` rubric, run in both orders (see module docstring)."""

    program_name = "pairwise"
    program_version = PROGRAM_VERSION
    rubric_kinds = ("pairwise",)
    concurrent_calls = True  # the two orders run concurrently under ``ajudge``

    def __init__(self, rubric: Rubric, lm: dspy.BaseLM, *, reasoning: bool = False) -> None:
        import dspy

        super().__init__(rubric, lm, {"reasoning": reasoning, "orders": "both"})
        self.reasoning = reasoning
        self.signature = pairwise_signature().with_instructions(rubric.instructions)
        self.program = (dspy.ChainOfThought if reasoning else dspy.Predict)(self.signature)

    def _question(self, item: JudgeItem) -> str | None:
        qid = str(item.metadata.get("question", "general"))
        if qid.startswith("custom:"):
            return qid.removeprefix("custom:").strip() or None
        try:
            return self.rubric.criterion(qid).description
        except KeyError:
            return None

    def _plan(self, item: JudgeItem) -> Plan | Judgment:
        """Two calls: the pair in order (A, B), then in order (B, A)."""
        other = item.metadata.get("other")
        question = self._question(item)
        if not isinstance(other, str) or question is None:
            why = (
                "metadata['other'] (response B) is missing"
                if not isinstance(other, str)
                else (
                    f"question {item.metadata.get('question')!r} is not in rubric {self.rubric.id}"
                )
            )
            return refusal_judgment(item, self.judge_id, "bad_pair", f"{item.item_id}: {why}")

        conversation = format_conversation(item.context)
        base = {"conversation": conversation, "question": untrusted(question)}
        text_a, text_b = untrusted(item.candidate), untrusted(other)
        first = {**base, "reply_a": text_a, "reply_b": text_b}
        second = {**base, "reply_a": text_b, "reply_b": text_a}
        return Plan([ProgramCall(self.program, first), ProgramCall(self.program, second)])

    def _finish(
        self, item: JudgeItem, plan: Plan, outcomes: Sequence[CallOutcome], started: float
    ) -> Judgment:
        one, two = outcomes
        usage = add_usage(one.usage, two.usage)
        raw = {
            "order_ab": _verdict(one),
            "order_ba": _verdict(two),
            "raw_ab": one.raw,
            "raw_ba": two.raw,
            "question": item.metadata.get("question", "general"),
            "requests": one.requests + two.requests,
            **pair_options(item),
        }
        failed = [o for o in (one, two) if o.status != "ok"]
        if failed:
            worst = next((o for o in failed if o.status == "lm_error"), failed[0])
            worst.usage = usage
            judgment = failure_judgment(item, self.judge_id, worst, started, details=raw)
            judgment.details["requests"] = one.requests + two.requests
            judgment.raw_output = "\n---\n".join(o.raw for o in failed if o.raw) or None
            return judgment
        first = str(one.prediction.verdict)
        second_back = _SWAP[str(two.prediction.verdict)]
        verdict = reconcile(first, second_back)
        raw["order_ba_mapped"] = second_back
        scores = (
            {}
            if verdict == "inconsistent"
            else {"a_win": {"A": 1.0, "tie": 0.5, "B": 0.0}[verdict]}
        )
        value = scores.get("a_win")
        return item_judgment(
            item,
            self.judge_id,
            started,
            usage=usage,
            verdict=verdict,
            scores=scores,
            overall=value,
            normalized=value,
            rationale=str(one.prediction.rationale or ""),
            raw_output="\n---\n".join(o.raw for o in (one, two) if o.raw) or None,
            details={**raw, "rationale_ba": str(two.prediction.rationale or "")},
        )


def pair_options(item: JudgeItem) -> dict[str, str]:
    """``{"option_a": .., "option_b": ..}`` of a pair item (what A and B are: response labels
    or candidate models; kept in the judgment so verdicts can be ranked), or ``{}``."""
    a, b = item.metadata.get("option_a"), item.metadata.get("option_b")
    return {"option_a": a, "option_b": b} if isinstance(a, str) and isinstance(b, str) else {}


def _verdict(outcome: CallOutcome) -> str | None:
    return str(outcome.prediction.verdict) if outcome.status == "ok" else None
