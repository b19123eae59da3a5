"""Aligning a pairwise judge to people's choices: DSPy examples of pairs, and the held-out proof
on verdicts (with a length-only and a position-only baseline).

The program DSPy optimises is the pairwise judge's one-order program (conversation, question,
reply A, reply B → verdict). Every labelled pair gives two examples, one per order, the verdict
swapped in the second, so the demonstrations teach the choice and not a position. The held-out
evaluation uses the whole judge: both orders asked and reconciled (opposite winners:
``inconsistent``, which never agrees with a person).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.align._data import LabelledItem, majority
from attune_judge.align._metric import MetricKind, verdict_agreement
from attune_judge.align._proof import HeldOutProof, Row, proof_from_values
from attune_judge.data import Judgment

__all__ = [
    "pair_examples",
    "pair_inputs",
    "preference_ceiling_values",
    "preference_proof",
    "verdict_of",
]

_SWAP = {"A": "B", "B": "A", "tie": "tie"}


def pair_inputs(judge: Any, li: LabelledItem) -> tuple[dict[str, str], dict[str, str]]:
    """The program inputs of a pair in order (A, B) and in order (B, A)."""
    plan = judge._plan(li.item)
    if isinstance(plan, Judgment):  # refused: not a pair of this rubric
        raise ValueError(f"{li.item.item_id}: {plan.error}")
    first, second = plan.calls
    return dict(first.inputs), dict(second.inputs)


def pair_examples(judge: Any, items: Sequence[LabelledItem]) -> list[Any]:
    """Two ``dspy.Example`` per pair (both orders), labelled with the people's verdict in that
    order, plus ``item_id`` (the pair's id, for the leakage check)."""
    import dspy

    out = []
    for li in items:
        first, second = pair_inputs(judge, li)
        verdict = str(li.verdict)
        for inputs, label in ((first, verdict), (second, _SWAP[verdict])):
            ex = dspy.Example(**inputs, verdict=label, item_id=li.item.item_id)
            out.append(ex.with_inputs(*inputs))
    return out


def verdict_of(judgment: Judgment) -> str | None:
    """The reconciled verdict of a pairwise judgment (``inconsistent`` included); ``None`` for
    a failed judgment."""
    if judgment.status != "ok" or judgment.verdict is None:
        return None
    return str(judgment.verdict)


def _longer(li: LabelledItem) -> str:
    a, b = len(li.item.candidate), len(str(li.item.metadata.get("other", "")))
    return "A" if a > b else "B" if b > a else "tie"


def preference_ceiling_values(
    items: Sequence[LabelledItem], kind: MetricKind
) -> list[tuple[str, float]]:
    """(conversation, value) per pair with ≥ 2 people: the mean over people of the agreement
    of one person's choice with the :func:`majority` of the others'."""
    out = []
    for li in items:
        if len(li.choices) < 2:
            continue
        vals = []
        for r, own in li.choices.items():
            others = [v for o, v in li.choices.items() if o != r]
            vals.append(verdict_agreement(own, majority(others), kind))
        out.append((li.cluster, sum(vals) / len(vals)))
    return out


def preference_proof(
    test: Sequence[LabelledItem],
    before: Sequence[Judgment],
    after: Sequence[Judgment],
    *,
    kind: MetricKind = "exact",
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> HeldOutProof:
    """Verdicts before and after against the people's choices on the test pairs (failed
    judgments left out of the pairing and counted), beside the longer-reply-wins and
    A-always-wins baselines on the same pairs and the human ceiling."""
    rows: list[Row] = []
    for li, jb, ja in zip(test, before, after, strict=True):
        vb, va = verdict_of(jb), verdict_of(ja)
        if vb is None or va is None or li.verdict is None:
            continue
        human = li.verdict
        rows.append(
            (
                li.cluster,
                verdict_agreement(vb, human, kind),
                verdict_agreement(va, human, kind),
                verdict_agreement(_longer(li), human, kind),
                None,
                verdict_agreement("A", human, kind),
            )
        )
    return proof_from_values(
        rows,
        preference_ceiling_values(test, kind),
        kind=kind,
        failed=(
            sum(verdict_of(j) is None for j in before),
            sum(verdict_of(j) is None for j in after),
        ),
        length_rule="longer reply wins",
        inconsistent={
            "before": sum(verdict_of(j) == "inconsistent" for j in before),
            "after": sum(verdict_of(j) == "inconsistent" for j in after),
        },
        B=B,
        seed=seed,
        level=level,
    )
