"""Judge items for the pairwise and behaviour judges, from the generic records.

- :func:`pairwise_items_from_preferences`: one pairwise ``JudgeItem`` per ``Preference`` with
  both texts (``candidate`` = A, ``metadata["other"]`` = B, see :mod:`._pairwise`), its
  context taken from the turn's judge item; ``item_id`` is the preference's id, so a judge
  verdict joins the participant's choice directly.
- :func:`attach_behaviour_items`: sets ``metadata["behaviour_items"]`` of each item to the
  behaviour items that apply to its turn (from AttuneBench behaviour ``Rating`` records,
  ``metadata["applicable"]``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from attune_judge.data import ChatMessage, JudgeItem, Preference, Rating, behaviour_item_order
from attune_judge.judges._pairwise import pairwise_item

__all__ = ["attach_behaviour_items", "pairwise_items_from_preferences"]


def pairwise_items_from_preferences(
    preferences: Iterable[Preference], items: Iterable[JudgeItem]
) -> list[JudgeItem]:
    """Pairwise judge items for every preference whose texts and turn context are known.

    Parameters
    ----------
    preferences
        E.g. ``attunebench_to_preferences(conversations)``.
    items
        Judge items giving each turn's context (``(conversation_id, turn)`` → context), e.g.
        ``attunebench_to_judge_items(conversations)``.
    """
    contexts: dict[tuple[str, int | None], list[ChatMessage]] = {}
    for item in items:
        contexts.setdefault((item.conversation_id, item.turn), item.context)
    out: list[JudgeItem] = []
    for pref in preferences:
        conversation = str(pref.metadata.get("conversation_id", pref.cluster or ""))
        turn = pref.metadata.get("turn")
        context = contexts.get((conversation, turn))
        if context is None or pref.text_a is None or pref.text_b is None:
            continue
        out.append(
            pairwise_item(
                pref.item_id,
                conversation,
                context,
                pref.text_a,
                pref.text_b,
                question=pref.question,
                option_a=pref.option_a,
                option_b=pref.option_b,
                turn=turn,
                metadata={"human_winner": pref.winner},
            )
        )
    return out


def attach_behaviour_items(
    items: Iterable[JudgeItem], ratings: Iterable[Rating]
) -> list[JudgeItem]:
    """Copies of ``items`` with ``metadata["behaviour_items"]`` = the turn's applicable items.

    Items of turns without behaviour ratings are returned unchanged (the judge then asks
    every item of its rubric).
    """
    applicable: dict[tuple[str, object], set[str]] = defaultdict(set)
    for rating in ratings:
        meta = rating.metadata
        item_id = meta.get("behaviour_item")
        if item_id and meta.get("applicable", True):
            applicable[(str(rating.cluster), meta.get("turn"))].add(str(item_id))
    out = []
    for item in items:
        ids = applicable.get((item.conversation_id, item.turn))
        if ids:
            meta = {**item.metadata, "behaviour_items": sorted(ids, key=behaviour_item_order)}
            item = item.model_copy(update={"metadata": meta})
        out.append(item)
    return out
