"""A minimal valid AttuneBench conversation (official keys) for tests to mutate."""

from __future__ import annotations

import copy
from typing import Any

_TURN: dict[str, Any] = {
    "turnNumber": 1,
    "userMessage": "I failed my driving test again.",
    "llmResponse": "I'm sorry, that's disappointing. How are you feeling?",
    "moodShiftTags": [{"emotion": "Upset", "intensity": 4}],
    "annotations": {
        "binaryJudgements": [
            {
                "questionId": "B1",
                "llmValue": "yes",
                "observedBehavior": "yes",
                "preferredBehavior": "no",
            }
        ],
        "alternateResponses": {
            "llmImproved": "Failing again really stings.",
            "humanEdited": "Ugh, again? That really stings.",
        },
        "pairwiseComparisons": [
            {"questionId": "general", "responseA": "original", "responseB": "human", "winner": "B"}
        ],
        "selectedPairwiseQuestions": ["general"],
    },
}


def conversation(turns: int = 1, conversation_id: str = "c1") -> dict[str, Any]:
    """A valid conversation with ``turns`` turns numbered 1..turns."""
    out: dict[str, Any] = {"conversationId": conversation_id, "metadata": {}, "turns": []}
    for n in range(1, turns + 1):
        turn = copy.deepcopy(_TURN)
        turn["turnNumber"] = n
        turn["userMessage"] = f"user message {n}"
        turn["llmResponse"] = f"original reply {n}"
        out["turns"].append(turn)
    return out
