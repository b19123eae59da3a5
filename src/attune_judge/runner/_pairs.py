"""Pairwise judge items for ``score --rubric <pairwise rubric>``.

From AttuneBench data: every pairwise comparison the participants answered (item id = the
comparison's id, so the judge's verdict joins the participant's choice in ``calibrate``). With a
candidates file also: every pair of candidate models at each turn, and every candidate against
the turn's reference (the participant-edited reply). A JudgeItem JSONL file is taken as it is
(its items must already be pairs: ``metadata["other"]``).

Both orders of every pair are asked by the judge itself (:class:`~attune_judge.judges.
PairwiseJudge`), so the A/B order chosen here does not bias the verdict.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from attune_judge.data import (
    JudgeItem,
    attunebench_to_judge_items,
    attunebench_to_preferences,
    load_attunebench,
    read_jsonl,
    turn_context,
)
from attune_judge.errors import UserError
from attune_judge.runner._candidates import items_for_candidates, read_candidates
from attune_judge.runner._inputs import filter_models, is_judge_item_jsonl

__all__ = ["REFERENCE_OPTION", "candidate_pairs", "load_pairwise_items"]

REFERENCE_OPTION = "reference"
"""Option name of the turn's reference reply in candidate-vs-reference pairs."""


def candidate_pairs(items: Sequence[JudgeItem]) -> list[JudgeItem]:
    """Pairs of candidate replies at each turn, and each candidate against the reference.

    ``items`` are one item per (turn, candidate model) (from :func:`items_for_candidates`).
    Models are paired in sorted order (``A`` = the first name); item ids are
    ``<conversation>:<turn>:pair:<model A>:<model B>`` (``B`` = ``reference`` for the
    reference pairs). The question is ``general``.
    """
    from attune_judge.judges import pairwise_item

    by_turn: dict[tuple[str, int | None], list[JudgeItem]] = defaultdict(list)
    for item in items:
        by_turn[(item.conversation_id, item.turn)].append(item)
    out: list[JudgeItem] = []
    for (conversation, turn), group in by_turn.items():
        ordered = sorted(group, key=lambda i: str(i.candidate_model))
        pairs = [(a, b.candidate, str(b.candidate_model)) for a, b in combinations(ordered, 2)]
        reference = group[0].reference
        if reference is not None:
            pairs += [(a, reference, REFERENCE_OPTION) for a in ordered]
        for a, text_b, option_b in pairs:
            option_a = str(a.candidate_model)
            out.append(
                pairwise_item(
                    f"{conversation}:{turn}:pair:{option_a}:{option_b}",
                    conversation,
                    a.context,
                    a.candidate,
                    text_b,
                    option_a=option_a,
                    option_b=option_b,
                    turn=turn,
                    metadata={"source": "candidates"},
                )
            )
    return out


def load_pairwise_items(
    data: Path,
    *,
    candidates: Path | None = None,
    models: Sequence[str] | None = None,
) -> list[JudgeItem]:
    """The pairs to judge for a pairwise rubric (see the module docstring).

    Raises
    ------
    UserError
        Unreadable data; a JudgeItem file whose items are not pairs; nothing to compare.
    """
    from attune_judge.judges import pairwise_items_from_preferences

    data = Path(data)
    if is_judge_item_jsonl(data):
        items = read_jsonl(data, JudgeItem)
        not_pairs = [i.item_id for i in items if not isinstance(i.metadata.get("other"), str)]
        if not_pairs:
            raise UserError(
                f"{data}: a pairwise rubric needs pair items (metadata.other = response B)",
                [f"item {i!r} has no metadata.other" for i in not_pairs[:5]],
            )
        return items
    conversations = load_attunebench(data)
    turn_items = list(attunebench_to_judge_items(conversations, candidate="original"))
    # every turn's context (a comparison may sit on a turn without a human-edited reply)
    contexts = [
        JudgeItem(
            item_id=f"{conv.conversation_id}:{turn.turn_number}:context",
            conversation_id=conv.conversation_id,
            turn=turn.turn_number,
            context=turn_context(turns, i),
            candidate="",
            candidate_model="context",
        )
        for conv in conversations
        for turns in [conv.sorted_turns()]
        for i, turn in enumerate(turns)
    ]
    out = [
        _without_answer(i)
        for i in pairwise_items_from_preferences(
            attunebench_to_preferences(conversations), contexts
        )
    ]
    if candidates is not None:
        cands = items_for_candidates(
            turn_items, read_candidates(candidates), source=str(candidates)
        )
        out += candidate_pairs(filter_models(cands, models, str(candidates)) if models else cands)
    return out


def _without_answer(item: JudgeItem) -> JudgeItem:
    """The item without the participant's own choice (a judge item carries no label)."""
    meta = {k: v for k, v in item.metadata.items() if k != "human_winner"}
    return item.model_copy(update={"metadata": {**meta, "source": "participants"}})
