"""The AttuneBench models read every alias and report precise problems."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from attune_judge.data import Conversation, attunebench_problems, load_attunebench
from tests.data._factory import conversation


def _problems(data: object) -> list[str]:
    with pytest.raises(ValidationError) as info:
        Conversation.model_validate(data)
    return attunebench_problems(info.value, "f.json")


def test_minimal_conversation_loads_with_defaults() -> None:
    conv = Conversation.model_validate(conversation())
    assert conv.participant_profile is None and conv.pre_panas is None
    turn = conv.turns[0]
    assert turn.human_edited == "Ugh, again? That really stings."
    assert turn.annotations.binary_judgements[0].preferred_behavior == "no"


def test_behaviour_answer_aliases() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["binaryJudgements"] = [
        {"questionId": "B1", "did_occur": "yes", "should_occur": "no"},
        {"questionId": "B2", "humanValue": "NA", "humanPreference": "Yes"},
        {"questionId": "b3", "actualValue": None, "should_occur": "na"},
    ]
    bjs = Conversation.model_validate(data).turns[0].annotations.binary_judgements
    assert [(b.question_id, b.observed_behavior, b.preferred_behavior) for b in bjs] == [
        ("B1", "yes", "no"),
        ("B2", "na", "yes"),
        ("B3", None, "na"),
    ]
    # applies unless both answers are na: B1 yes/no, B2 na/yes, B3 None/na -> all apply
    assert [b.applicable for b in bjs] == [True, True, True]


def test_behaviour_item_with_both_answers_na_does_not_apply() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["binaryJudgements"] = [
        {"questionId": "B5", "observedBehavior": "na", "preferredBehavior": "na"},
        {"questionId": "B6", "observedBehavior": None, "preferredBehavior": None},
    ]
    bjs = Conversation.model_validate(data).turns[0].annotations.binary_judgements
    assert [b.applicable for b in bjs] == [False, True]


def test_legacy_pairwise_keys_winner_null_and_custom_question() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["pairwiseComparisons"] = [
        {"questionId": "pw3", "response_1": "Alternate", "response_2": "original", "winner": "a"},
        {
            "questionId": "custom:Which one is kinder?",
            "response_1": "human",
            "response_2": "original",
            "winner": None,
        },
    ]
    comps = Conversation.model_validate(data).turns[0].annotations.pairwise_comparisons
    assert [(c.question_id, c.response_a, c.response_b, c.winner) for c in comps] == [
        ("PW3", "alternate", "original", "A"),
        ("custom:Which one is kinder?", "human", "original", None),
    ]
    dumped = Conversation.model_validate(data).to_official_json()
    first = dumped["turns"][0]["annotations"]["pairwiseComparisons"][0]
    assert first == {
        "questionId": "PW3",
        "responseA": "alternate",
        "responseB": "original",
        "winner": "A",
    }


def test_blinded_alternates_are_mapped_and_written_back_blinded() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["alternateResponses"] = {
        "alternate1": "improved text",
        "alternate2": "edited text",
    }
    conv = Conversation.model_validate(data)
    alt = conv.turns[0].annotations.alternate_responses
    assert alt is not None and alt.blinded
    assert (alt.llm_improved, alt.human_edited) == ("improved text", "edited text")
    assert conv.to_official_json()["turns"][0]["annotations"]["alternateResponses"] == {
        "alternate1": "improved text",
        "alternate2": "edited text",
    }


def test_mixing_blinded_and_official_alternate_keys_is_an_error() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["alternateResponses"] = {
        "llmImproved": "a",
        "alternate2": "b",
    }
    (line,) = _problems(data)
    assert line.startswith("f.json: $.turns[0].annotations.alternateResponses: use either")


def test_legacy_intensity_words_and_emotion_case() -> None:
    data = conversation()
    data["turns"][0]["moodShiftTags"] = [
        {"emotion": "upset", "intensity": "mild"},
        {"emotion": "NERVOUS", "intensity": "Moderate"},
        {"emotion": "Afraid", "intensity": "intense"},
        {"emotion": "Guilty", "intensity": None},
    ]
    tags = Conversation.model_validate(data).turns[0].mood_shift_tags
    assert [(t.emotion, t.intensity) for t in tags] == [
        ("Upset", 2),
        ("Nervous", 4),
        ("Afraid", 6),
        ("Guilty", None),
    ]


def test_null_or_missing_mood_tags_mean_no_tags() -> None:
    data = conversation(2)
    data["turns"][0]["moodShiftTags"] = None
    del data["turns"][1]["moodShiftTags"]
    conv = Conversation.model_validate(data)
    assert conv.turns[0].mood_shift_tags == [] and conv.turns[1].mood_shift_tags == []


def test_emotion_outside_panas_lists_the_allowed_ones() -> None:
    data = conversation()
    data["turns"][0]["moodShiftTags"] = [{"emotion": "Sad", "intensity": 3}]
    (line,) = _problems(data)
    assert line.startswith("f.json: $.turns[0].moodShiftTags[0].emotion: emotion 'Sad' is not")
    assert "allowed: Proud, Irritable, Alert," in line and line.endswith("Interested")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "intensity 0 is out of range 1-7"),
        (8, "intensity 8 is out of range 1-7"),
        (2.5, "intensity must be an integer 1-7, got 2.5"),
        ("extreme", "got 'extreme'"),
        (True, "got True"),
    ],
)
def test_intensity_out_of_range_or_not_a_number(value: object, expected: str) -> None:
    data = conversation()
    data["turns"][0]["moodShiftTags"] = [{"emotion": "Upset", "intensity": value}]
    (line,) = _problems(data)
    assert line.startswith("f.json: $.turns[0].moodShiftTags[0].intensity: ")
    assert expected in line


def test_label_without_response_is_reported_at_the_label() -> None:
    data = conversation(2)
    data["turns"][1]["annotations"]["alternateResponses"] = {"llmImproved": "x"}
    (line,) = _problems(data)
    assert line == (
        "f.json: $.turns[1].annotations.pairwiseComparisons[0].responseB: pairwise label "
        "'human' resolves to no response: this turn has no humanEdited/alternate2 in "
        "alternateResponses"
    )


def test_alternate_label_without_alternates_at_all() -> None:
    data = conversation()
    del data["turns"][0]["annotations"]["alternateResponses"]
    data["turns"][0]["annotations"]["pairwiseComparisons"][0]["responseA"] = "alternate"
    (line,) = _problems(data)
    assert ".pairwiseComparisons[0].responseA: pairwise label 'alternate' resolves" in line


def test_same_label_on_both_sides_is_an_error() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["pairwiseComparisons"][0]["responseA"] = "human"
    (line,) = _problems(data)
    assert line.endswith(
        "pairwiseComparisons[0].responseB: responseA and responseB are both 'human'"
    )


def test_duplicate_turn_numbers_name_both_turns() -> None:
    data = conversation(3)
    data["turns"][2]["turnNumber"] = 1
    (line,) = _problems(data)
    assert line == "f.json: $.turns[2].turnNumber: duplicate turn number 1 (also at turns[0])"


def test_wrong_types_are_all_reported_with_their_paths() -> None:
    data = conversation()
    data["turns"][0]["turnNumber"] = "one"
    data["turns"][0]["userMessage"] = 42
    data["turns"][0]["annotations"]["pairwiseComparisons"][0]["winner"] = "tie"
    lines = _problems(data)
    assert "f.json: $.turns[0].turnNumber: Input should be a valid integer" in lines[0]
    assert lines[1] == "f.json: $.turns[0].userMessage: Input should be a valid string (got 42)"
    assert lines[2] == (
        "f.json: $.turns[0].annotations.pairwiseComparisons[0].winner: winner must be 'A', 'B' "
        "or null, got 'tie'"
    )
    assert len(lines) == 3


def test_unknown_keys_are_kept_listed_and_written_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A release with undocumented keys loads; each key is named once, by file and JSON path."""
    data = conversation()
    data["studyArm"] = "B"
    data["turns"][0]["latencyMs"] = 3
    data["turns"][0]["annotations"]["pairwiseComparisons"][0]["rationale"] = "why"
    data["metadata"]["anything"] = 1  # free keys are part of the format here: not reported
    path = tmp_path / "conversation_1.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="attune_judge.data"):
        (conv,) = load_attunebench(path)
    assert [r.getMessage() for r in caplog.records][1:] == [
        f"  {path}: $.studyArm",
        f"  {path}: $.turns[0].latencyMs",
        f"  {path}: $.turns[0].annotations.pairwiseComparisons[0].rationale",
    ]
    assert caplog.records[0].getMessage().startswith("3 key(s) that the AttuneBench format")
    written = conv.to_official_json()
    assert written["studyArm"] == "B"
    assert written["turns"][0]["latencyMs"] == 3
    assert written["metadata"]["anything"] == 1


def test_unknown_pairwise_question_and_behaviour_id() -> None:
    data = conversation()
    data["turns"][0]["annotations"]["pairwiseComparisons"][0]["questionId"] = "PW99"
    data["turns"][0]["annotations"]["binaryJudgements"][0]["questionId"] = "Q1"
    lines = _problems(data)
    assert any(
        "questionId: behaviour question id must look like 'B1'..'B505', got 'Q1'" in x
        for x in lines
    )
    assert any(
        "pairwise question id must be one of general, PW1" in x and "got 'PW99'" in x for x in lines
    )


def test_no_turns_is_an_error() -> None:
    data = conversation()
    data["turns"] = []
    (line,) = _problems(data)
    assert line.startswith("f.json: $.turns: List should have at least 1 item")


def test_integer_conversation_id_becomes_a_string() -> None:
    data = conversation()
    data["conversationId"] = 17
    assert Conversation.model_validate(data).conversation_id == "17"


# --- PANAS ---------------------------------------------------------------------------------

_ITEMS = {
    # positive: 1+2+3+4+5+6+7+1+2+3 = 34
    "Proud": 1,
    "Alert": 2,
    "Inspired": 3,
    "Determined": 4,
    "Attentive": 5,
    "Active": 6,
    "Excited": 7,
    "Strong": 1,
    "Enthusiastic": 2,
    "Interested": 3,
    # negative: 2*10 = 20
    "Irritable": 2,
    "Ashamed": 2,
    "Nervous": 2,
    "Jittery": 2,
    "Distressed": 2,
    "Afraid": 2,
    "Upset": 2,
    "Guilty": 2,
    "Scared": 2,
    "Hostile": 2,
}


def _panas(value: dict[str, Any]) -> Any:
    """The PANAS-SF block of a conversation (its ``prePanas``), as the loader reads it."""
    return Conversation.model_validate({**conversation(), "prePanas": value}).pre_panas


def test_panas_items_under_responses_any_case_totals_derived() -> None:
    panas = _panas({"responses": {k.lower(): v for k, v in _ITEMS.items()}})
    assert panas.items["Excited"] == 7
    assert (panas.total_positive_affect, panas.total_negative_affect) == (34, 20)
    assert list(panas.items) == [
        "Proud",
        "Irritable",
        "Alert",
        "Ashamed",
        "Inspired",
        "Nervous",
        "Determined",
        "Attentive",
        "Jittery",
        "Active",
        "Distressed",
        "Afraid",
        "Excited",
        "Upset",
        "Strong",
        "Guilty",
        "Scared",
        "Hostile",
        "Enthusiastic",
        "Interested",
    ]  # questionnaire order


def test_panas_given_totals_are_kept_and_partial_items_give_no_total() -> None:
    panas = _panas({**_ITEMS, "totalPositiveAffect": 40, "totalNegativeAffect": 20})
    assert panas.total_positive_affect == 40  # as given, even if items say 34
    partial = _panas({"Proud": 3, "UPSET": 5})
    assert partial.items == {"Proud": 3, "Upset": 5}
    assert partial.total_positive_affect is None and partial.total_negative_affect is None


def test_panas_problems_are_precise() -> None:
    data = conversation()
    data["prePanas"] = {"responses": {"nervous": 9, "Nervus": 3}}
    data["postPanas"] = {**_ITEMS, "Upset": 0, "upset": 2, "totalPositiveAffect": 80}
    lines = _problems(data)
    assert lines[0] == (
        "f.json: $.prePanas.responses.nervous: PANAS item Nervous 9 is out of range 1-7; "
        "'Nervus' is not a PANAS-SF item; allowed: Proud, Irritable, Alert, Ashamed, Inspired, "
        "Nervous, Determined, Attentive, Jittery, Active, Distressed, Afraid, Excited, Upset, "
        "Strong, Guilty, Scared, Hostile, Enthusiastic, Interested"
    )
    assert lines[1].startswith("f.json: $.postPanas.Upset: PANAS item Upset 0 is out of range")
    assert "PANAS item Upset is given more than once" in lines[1]
    assert "totalPositiveAffect 80 is out of range 10-70" in lines[1]


def test_panas_keeps_non_numeric_extra_keys() -> None:
    conv = Conversation.model_validate(
        {**conversation(), "prePanas": {**_ITEMS, "completedAt": "2026-01-01"}}
    )
    assert conv.pre_panas is not None and conv.pre_panas.extra == {"completedAt": "2026-01-01"}
    written = conv.to_official_json()
    assert written["prePanas"]["completedAt"] == "2026-01-01"
    assert Conversation.model_validate(written).pre_panas == conv.pre_panas  # read back the same


def test_conversation_wide_legacy_keys() -> None:
    legacy = {"Q1": "Other", "Q2": "Implied or indirect", "Q3": "Mostly well-matched"}
    conv = Conversation.model_validate({**conversation(), "conversationWideQuestions": legacy})
    wide = conv.conversation_wide
    assert wide is not None
    assert wide.q1_looking_for == ["Other"]
    assert wide.q2_emotion_clarity == "Implied or indirect"
    assert wide.q3_model_fit == "Mostly well-matched"
    assert conv.to_official_json()["conversationWideQuestions"]["q1_lookingFor"] == ["Other"]


def test_four_branch_scores_out_of_range() -> None:
    data = conversation()
    data["conversationWideQuestions"] = {"fourBranchScores": {"managing": 8}}
    (line,) = _problems(data)
    assert line == (
        "f.json: $.conversationWideQuestions.fourBranchScores.managing: score 8 is out of range 1-7"
    )


def test_metadata_and_profile_keep_extra_keys() -> None:
    data = conversation()
    data["metadata"] = {"model": "m", "turnCount": 1, "studyArm": "pilot"}
    data["participant_profile"] = {"participant_id": "p1", "wave": 2}
    conv = Conversation.model_validate(data)
    assert conv.metadata.turn_count == 1
    out = conv.to_official_json()
    assert out["metadata"]["studyArm"] == "pilot" and out["metadata"]["turnCount"] == 1
    assert out["participant_profile"]["wave"] == 2
