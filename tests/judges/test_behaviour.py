"""Behaviour judge: yes/no per applicable item."""

from __future__ import annotations

import json

from attune_judge.data import JudgeItem
from attune_judge.judges import BehaviourJudge, build_judge
from attune_judge.testing import ScriptedEngine


def test_applicable_items_only_scored_by_polarity(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: json.dumps({"B1": "yes", "B13": "no", "B19": "yes"}))
    judge = build_judge("attunebench-behaviours", engine.lm())
    assert isinstance(judge, BehaviourJudge)
    asked = item.model_copy(update={"metadata": {"behaviour_items": ["B19", "B1", "B13", "B999"]}})
    result = judge.judge(asked)
    assert result.status == "ok"
    # the observer's answers, named like the participants' own (B1:observed)
    assert result.scores == {"B1:observed": 1.0, "B13:observed": 0.0, "B19:observed": 1.0}
    # B1 and B19 are positive and answered yes; B13 (a follow-up question) is neutral: 2 of 2
    assert result.overall == result.normalized == 1.0
    assert result.details["polarity"] == {
        "B1:observed": "positive",
        "B13:observed": "neutral",
        "B19:observed": "positive",
    }
    assert result.details["answers"] == {"B1": "yes", "B13": "no", "B19": "yes"}
    assert result.details["unknown_items"] == ["B999"]
    prompt = engine.requests[0][0]["content"]
    assert "Did the model ask a follow-up question?" in prompt
    assert "B2" not in prompt.replace("B19", "")


def test_answer_outside_yes_no_is_a_parse_error(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: json.dumps({"B1": "maybe"}))
    judge = build_judge("attunebench-behaviours", engine.lm())
    result = judge.judge(item.model_copy(update={"metadata": {"behaviour_items": ["B1"]}}))
    assert result.status == "parse_error"
    assert result.raw_output == '{"B1": "maybe"}'
    assert result.scores == {}


def test_no_applicable_items_is_refused(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: "{}")
    judge = build_judge("attunebench-behaviours", engine.lm())
    result = judge.judge(item.model_copy(update={"metadata": {"behaviour_items": ["B999"]}}))
    assert result.status == "refused" and engine.calls == 0


def test_without_item_list_every_item_is_asked(item: JudgeItem) -> None:
    answers = {}
    engine = ScriptedEngine(lambda m: json.dumps(answers))
    judge = build_judge("attunebench-behaviours", engine.lm())
    ids = [c.id for c in judge.rubric.criteria]  # type: ignore[attr-defined]
    answers.update({i: "no" for i in ids})
    result = judge.judge(item)
    assert result.status == "ok" and len(result.scores) == 36
    # "no" everywhere: good only on the 8 negative items, of 28 non-neutral ones (8 neutral)
    assert result.overall == 8 / 28


def test_yes_to_a_negative_behaviour_counts_against_the_reply(item: JudgeItem) -> None:
    # B1 acknowledged emotion (positive, yes: good); B14 moral judgment and B20 catastrophizing
    # (negative, yes: bad); B313 advice before any question (negative, no: good) -> 2 of 4
    answers = {"B1": "yes", "B14": "yes", "B20": "yes", "B313": "no"}
    engine = ScriptedEngine(lambda m: json.dumps(answers))
    judge = build_judge("attunebench-behaviours", engine.lm())
    asked = item.model_copy(update={"metadata": {"behaviour_items": list(answers)}})
    result = judge.judge(asked)
    assert result.status == "ok"
    assert result.overall == 0.5
    assert result.details["answers"] == answers


def test_only_neutral_items_give_no_score(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: json.dumps({"B13": "yes"}))
    judge = build_judge("attunebench-behaviours", engine.lm())
    result = judge.judge(item.model_copy(update={"metadata": {"behaviour_items": ["B13"]}}))
    assert result.status == "ok"
    assert result.scores == {"B13:observed": 1.0}
    assert result.overall is None and result.normalized is None


def test_rubric_polarity_is_the_instruments_and_covers_every_item() -> None:
    from attune_judge.data import BEHAVIOUR_POLARITY, instrument
    from attune_judge.rubrics import load_rubric

    rubric = load_rubric("attunebench-behaviours")
    assert {c.id: c.polarity for c in rubric.criteria} == BEHAVIOUR_POLARITY
    assert set(BEHAVIOUR_POLARITY) == set(instrument.BEHAVIOUR_ITEMS_BY_ID)
    negative = {k for k, v in BEHAVIOUR_POLARITY.items() if v == "negative"}
    assert negative == {"B14", "B20", "B206", "B207", "B310", "B311", "B313", "B408"}


def test_polarity_only_on_behaviour_rubrics() -> None:
    import pytest

    from attune_judge.errors import UserError
    from attune_judge.rubrics import parse_rubric

    data = {
        "id": "x",
        "version": "1",
        "description": "d",
        "kind": "reference",
        "instructions": "i",
        "criteria": [
            {"id": "a", "name": "a", "description": "d", "scale": {"min": 1, "max": 5}},
        ],
    }
    before = parse_rubric(data, "x.yaml").content_hash
    # a rubric without polarities keeps the hash it had before the field existed
    assert before == "4d9782a8d2c6fdf9d5dbb29f26b4e70dc3b2a1bb72666c9de93e56c6abb55ea9"
    data["criteria"][0]["polarity"] = "negative"
    with pytest.raises(UserError, match="polarity is for behaviour items only"):
        parse_rubric(data, "x.yaml")
