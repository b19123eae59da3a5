"""A few judge items from the sample AttuneBench conversations (shared by tests and recorder)."""

from __future__ import annotations

from attune_judge.data import (
    JudgeItem,
    attunebench_to_judge_items,
    attunebench_to_preferences,
    attunebench_to_ratings,
    load_attunebench,
)
from attune_judge.judges import attach_behaviour_items, pairwise_items_from_preferences
from tests.conftest import SAMPLES

RECORDING_MODEL = "replay/smollm2-135m-instruct"


def sample_items(n: int = 2) -> tuple[list[JudgeItem], list[JudgeItem], list[JudgeItem]]:
    """``n`` reference items, ``n`` pairwise items and ``n`` behaviour items (sorted by id)."""
    conversations = load_attunebench(SAMPLES)
    items = sorted(attunebench_to_judge_items(conversations), key=lambda i: i.item_id)
    pairs = sorted(
        pairwise_items_from_preferences(attunebench_to_preferences(conversations), items),
        key=lambda i: i.item_id,
    )
    behaviour = attach_behaviour_items(items, attunebench_to_ratings(conversations))
    with_items = [i for i in behaviour if i.metadata.get("behaviour_items")]
    return items[:n], pairs[:n], with_items[:n]
