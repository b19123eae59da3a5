"""Hand-built judge items for the judge tests."""

from __future__ import annotations

import pytest

from attune_judge.data import ChatMessage, JudgeItem
from attune_judge.judges import pairwise_item

CONTEXT = [
    ChatMessage(role="user", content="I failed my driving test again. I feel like an idiot."),
]
WARM = "That sounds really discouraging. Failing twice doesn't make you an idiot."
BRUSH_OFF = "Many people fail. Just try again."


@pytest.fixture
def item() -> JudgeItem:
    return JudgeItem(
        item_id="c1:1:original",
        conversation_id="c1",
        turn=1,
        context=CONTEXT,
        candidate=BRUSH_OFF,
        candidate_model="original",
        reference=WARM,
    )


@pytest.fixture
def pair() -> JudgeItem:
    return pairwise_item("c1:1:pairwise:PW4:0", "c1", CONTEXT, BRUSH_OFF, WARM, question="PW4")
