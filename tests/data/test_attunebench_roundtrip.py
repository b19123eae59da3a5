"""Property: any valid conversation, written with any mix of aliases, survives dump -> load."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attune_judge.data import Conversation, instrument

TEXT = st.text(max_size=12)
NONBLANK = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
ANSWER = st.sampled_from(["yes", "no", "na", "YES", "Na", None])


def _case(word: str) -> st.SearchStrategy[str]:
    return st.sampled_from([word, word.lower(), word.upper()])


@st.composite
def mood_tag(draw: st.DrawFn) -> dict[str, Any]:
    emotion = draw(st.sampled_from(instrument.PANAS_ITEMS).flatmap(_case))
    intensity = draw(
        st.one_of(st.none(), st.integers(1, 7), st.sampled_from(["mild", "moderate", "intense"]))
    )
    return {"emotion": emotion, "intensity": intensity}


@st.composite
def binary(draw: st.DrawFn) -> dict[str, Any]:
    observed_key = draw(
        st.sampled_from(["observedBehavior", "did_occur", "humanValue", "actualValue"])
    )
    preferred_key = draw(st.sampled_from(["preferredBehavior", "should_occur", "humanPreference"]))
    out = {"questionId": draw(st.sampled_from([b.id for b in instrument.BEHAVIOUR_ITEMS]))}
    if draw(st.booleans()):
        out["llmValue"] = draw(ANSWER)
    out[observed_key] = draw(ANSWER)
    out[preferred_key] = draw(ANSWER)
    return out


QUESTION = st.one_of(
    st.sampled_from(list(instrument.PAIRWISE_QUESTIONS)),
    NONBLANK.map(lambda s: "custom:" + s),
)


@st.composite
def annotations(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {"binaryJudgements": draw(st.lists(binary(), max_size=3))}
    labels = ["original"]
    kind = draw(st.sampled_from(["none", "absent", "official", "blinded"]))
    improved = draw(st.one_of(st.none(), NONBLANK))
    edited = draw(st.one_of(st.none(), NONBLANK))
    if kind == "none":
        out["alternateResponses"] = None
    elif kind == "official":
        out["alternateResponses"] = {"llmImproved": improved, "humanEdited": edited}
    elif kind == "blinded":
        out["alternateResponses"] = {"alternate1": improved, "alternate2": edited}
    if kind in ("official", "blinded"):
        labels += ["alternate"] * (improved is not None) + ["human"] * (edited is not None)
    comps = []
    if len(labels) > 1:
        for _ in range(draw(st.integers(0, 3))):
            a, b = draw(st.permutations(labels))[:2]
            keys = draw(st.sampled_from([("responseA", "responseB"), ("response_1", "response_2")]))
            comps.append(
                {
                    "questionId": draw(QUESTION),
                    keys[0]: a,
                    keys[1]: b,
                    "winner": draw(st.sampled_from(["A", "B", None])),
                }
            )
    out["pairwiseComparisons"] = comps
    out["selectedPairwiseQuestions"] = [c["questionId"] for c in comps]
    return out


@st.composite
def panas(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    names = draw(st.sets(st.sampled_from(instrument.PANAS_ITEMS), min_size=1))
    items = {draw(_case(n)): draw(st.integers(1, 7)) for n in names}
    out: dict[str, Any] = {"responses": items} if draw(st.booleans()) else dict(items)
    if draw(st.booleans()):
        out["totalPositiveAffect"] = draw(st.integers(10, 70))
        out["totalNegativeAffect"] = draw(st.integers(10, 70))
    if draw(st.booleans()):
        out["completedAt"] = draw(TEXT)
    return out


@st.composite
def wide(draw: st.DrawFn) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    legacy = draw(st.booleans())
    out: dict[str, Any] = {
        "Q1" if legacy else "q1_lookingFor": draw(
            st.lists(st.sampled_from(instrument.Q1_LOOKING_FOR_OPTIONS), max_size=2)
        ),
        "Q2" if legacy else "q2_emotionClarity": draw(
            st.one_of(st.none(), st.sampled_from(instrument.Q2_EMOTION_CLARITY_OPTIONS))
        ),
        "Q3" if legacy else "q3_modelFit": draw(st.sampled_from(instrument.Q3_MODEL_FIT_OPTIONS)),
    }
    if draw(st.booleans()):
        out["fourBranchScores"] = {
            b: draw(st.one_of(st.none(), st.integers(1, 7))) for b in instrument.FOUR_BRANCHES
        }
    return out


@st.composite
def conversation(draw: st.DrawFn) -> dict[str, Any]:
    numbers = draw(st.lists(st.integers(0, 50), min_size=1, max_size=4, unique=True))
    turns = [
        {
            "turnNumber": n,
            "userMessage": draw(TEXT),
            "llmResponse": draw(TEXT),
            "moodShiftTags": draw(st.lists(mood_tag(), max_size=3)),
            "annotations": draw(annotations()),
        }
        for n in numbers
    ]
    out: dict[str, Any] = {
        "conversationId": draw(st.one_of(NONBLANK, st.integers(0, 999))),
        "metadata": {
            "model": draw(st.one_of(st.none(), TEXT)),
            "turnCount": len(turns),
            "studyArm": draw(st.one_of(st.none(), TEXT, st.integers())),
        },
        "prePanas": draw(panas()),
        "postPanas": draw(panas()),
        "conversationWideQuestions": draw(wide()),
        "turns": turns,
    }
    profile = draw(st.sampled_from(["absent", "null", "dict"]))
    if profile == "null":
        out["participant_profile"] = None
    elif profile == "dict":
        out["participant_profile"] = {
            "participant_id": draw(TEXT),
            "age": draw(st.integers(18, 90)),
            "wave": draw(st.integers(1, 3)),
        }
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation())
def test_any_valid_conversation_survives_dump_and_load(raw: dict[str, Any]) -> None:
    first = Conversation.model_validate(raw)
    dumped = json.loads(json.dumps(first.to_official_json()))
    second = Conversation.model_validate(dumped)
    assert second == first
    assert second.to_official_json() == dumped
    # and the Python-name dump reads back too
    assert Conversation.model_validate(first.model_dump()) == first
    # nothing was silently dropped: same turns, tags, answers and comparisons
    assert [t.turn_number for t in second.turns] == [t["turnNumber"] for t in raw["turns"]]
    for turn, raw_turn in zip(second.turns, raw["turns"], strict=True):
        assert len(turn.mood_shift_tags) == len(raw_turn["moodShiftTags"])
        ann = raw_turn["annotations"]
        assert len(turn.annotations.binary_judgements) == len(ann["binaryJudgements"])
        assert len(turn.annotations.pairwise_comparisons) == len(ann["pairwiseComparisons"])
