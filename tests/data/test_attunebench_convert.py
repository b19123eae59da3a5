"""Conversions to JudgeItem / Preference / Rating: stable ids, contexts, resolved texts."""

from __future__ import annotations

import json

import pytest

from attune_judge.data import (
    ChatMessage,
    Conversation,
    attunebench_to_judge_items,
    attunebench_to_preferences,
    attunebench_to_ratings,
    load_attunebench,
)
from attune_judge.errors import UserError
from tests.conftest import SAMPLES
from tests.data._factory import conversation


@pytest.fixture(scope="module")
def samples() -> list[Conversation]:
    return load_attunebench(SAMPLES)


def _raw(n: int) -> dict:  # type: ignore[type-arg]
    return json.loads((SAMPLES / f"conversation_{n}.json").read_text(encoding="utf-8"))


def test_one_item_per_turn_with_a_reference(samples: list[Conversation]) -> None:
    items = attunebench_to_judge_items(samples)
    assert len(items) == 19  # turns with humanEdited (hand tally in test_attunebench_samples)
    assert [i.item_id for i in items[:4]] == [
        "synthetic-5:1:original",
        "synthetic-5:2:original",
        "synthetic-5:3:original",
        "synthetic-12:1:original",
    ]
    assert len({i.item_id for i in items}) == 19
    # conversation 31 only has a reference on turn 1
    assert [i.item_id for i in items if i.conversation_id == "synthetic-31"] == [
        "synthetic-31:1:original"
    ]


def test_item_context_is_earlier_turns_then_the_participant_message(
    samples: list[Conversation],
) -> None:
    raw = _raw(5)
    item = next(
        i for i in attunebench_to_judge_items(samples) if i.item_id == "synthetic-5:3:original"
    )
    t1, t2, t3 = raw["turns"]
    assert item.context == [
        ChatMessage(role="user", content=t1["userMessage"]),
        ChatMessage(role="assistant", content=t1["llmResponse"]),
        ChatMessage(role="user", content=t2["userMessage"]),
        ChatMessage(role="assistant", content=t2["llmResponse"]),
        ChatMessage(role="user", content=t3["userMessage"]),
    ]
    assert item.candidate == t3["llmResponse"]
    assert item.reference == t3["annotations"]["alternateResponses"]["humanEdited"]
    assert item.turn == 3 and item.candidate_model == "original"
    assert item.metadata["original_model"] == "model-a"
    assert item.metadata["blinded"] is False


def test_turns_are_ordered_by_number_for_context() -> None:
    data = conversation(2)
    data["turns"].reverse()  # turn 2 first in the file
    conv = Conversation.model_validate(data)
    second = attunebench_to_judge_items([conv])[1]
    assert second.item_id == "c1:2:original"
    assert [m.content for m in second.context] == [
        "user message 1",
        "original reply 1",
        "user message 2",
    ]


def test_other_candidates_and_blinded_policy(samples: list[Conversation]) -> None:
    improved = attunebench_to_judge_items(samples, "llm_improved")
    assert len(improved) == 19  # every turn with a reference also has llmImproved
    assert improved[0].item_id == "synthetic-5:1:llm_improved"
    assert (
        improved[0].candidate
        == _raw(5)["turns"][0]["annotations"]["alternateResponses"]["llmImproved"]
    )
    ceiling = attunebench_to_judge_items(samples, "human_edited")
    assert all(i.candidate == i.reference for i in ceiling)
    blinded = [i for i in attunebench_to_judge_items(samples) if i.metadata["blinded"]]
    assert [i.item_id for i in blinded] == ["synthetic-12:1:original", "synthetic-12:2:original"]
    # alternate2 is the participant-edited response by the instrument's mapping
    assert (
        blinded[0].reference
        == _raw(12)["turns"][0]["annotations"]["alternateResponses"]["alternate2"]
    )
    assert len(attunebench_to_judge_items(samples, include_blinded=False)) == 17


def test_unknown_candidate_is_a_user_error(samples: list[Conversation]) -> None:
    with pytest.raises(UserError, match="candidate 'gpt' is not one of: original, llm_improved"):
        attunebench_to_judge_items(samples, "gpt")


def test_preferences_resolve_labels_to_texts(samples: list[Conversation]) -> None:
    prefs = attunebench_to_preferences(samples)
    assert len(prefs) == 30
    assert len({p.item_id for p in prefs}) == 30
    by_id = {p.item_id: p for p in prefs}
    # conversation 17, turn 1: response_1 original, response_2 human, winner B
    p = by_id["synthetic-17:1:pairwise:general:0"]
    t1 = _raw(17)["turns"][0]
    assert (p.option_a, p.option_b, p.winner) == ("original", "human_edited", "B")
    assert p.text_a == t1["llmResponse"]
    assert p.text_b == t1["annotations"]["alternateResponses"]["humanEdited"]
    assert (p.rater, p.question, p.cluster) == ("participant", "general", "synthetic-17")
    # blinded conversation 12, turn 1: alternate (alternate1) vs human (alternate2), winner B
    q = by_id["synthetic-12:1:pairwise:general:0"]
    alts = _raw(12)["turns"][0]["annotations"]["alternateResponses"]
    assert (q.option_a, q.option_b) == ("llm_improved", "human_edited")
    assert (q.text_a, q.text_b) == (alts["alternate1"], alts["alternate2"])
    assert q.metadata["blinded"] is True
    custom = by_id[
        "synthetic-12:1:pairwise:custom:Which response sounds more like a caring friend?:1"
    ]
    assert custom.question == "custom:Which response sounds more like a caring friend?"
    assert [p.item_id for p in prefs if p.winner is None] == [
        "synthetic-23:1:pairwise:general:0",
        "synthetic-23:2:pairwise:general:0",
        "synthetic-102:1:pairwise:custom:Which response would you rather get from a friend?:1",
    ]


def test_ratings_hold_observed_and_preferred_answers(samples: list[Conversation]) -> None:
    ratings = attunebench_to_ratings(samples)
    assert len(ratings) == 70  # 35 binary judgements x (observed, preferred)
    b14 = [r for r in ratings if r.item_id == "synthetic-17:2:original" and "B14" in r.dimension]
    # file: llmValue no, actualValue yes (observed), should_occur no (preferred)
    assert [(r.dimension, r.value, r.rater) for r in b14] == [
        ("B14:observed", "yes", "participant"),
        ("B14:preferred", "no", "participant"),
    ]
    assert b14[0].cluster == "synthetic-17"
    assert b14[0].metadata["category"] == "using"
    assert b14[0].metadata["kind"] == "observed"
    b5 = [r for r in ratings if r.item_id == "synthetic-31:1:original" and "B5" in r.dimension]
    assert [r.value for r in b5] == ["na", "na"] and not b5[0].metadata["applicable"]
    with_llm = attunebench_to_ratings(samples, include_llm_value=True)
    assert len(with_llm) == 105
    llm = [r for r in with_llm if r.rater == "llm_annotator"]
    assert llm[0].item_id == "synthetic-5:1:original" and llm[0].dimension == "B1:observed"
    assert llm[0].rater_group == "llm" and llm[0].value == "yes"
