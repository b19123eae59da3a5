"""Behaviour judge: yes/no per applicable item."""

from __future__ import annotations

import json

from attune_judge.data import JudgeItem
from attune_judge.judges import BehaviourJudge, build_judge
from attune_judge.testing import ScriptedEngine


def test_applicable_items_only_and_yes_share(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: json.dumps({"B1": "yes", "B13": "no", "B19": "yes"}))
    judge = build_judge("attunebench-behaviours", engine.lm())
    assert isinstance(judge, BehaviourJudge)
    asked = item.model_copy(update={"metadata": {"behaviour_items": ["B19", "B1", "B13", "B999"]}})
    result = judge.judge(asked)
    assert result.status == "ok"
    assert result.scores == {"B1": 1.0, "B13": 0.0, "B19": 1.0}
    # 2 yes of 3 items
    assert abs(result.overall - 2 / 3) < 1e-12
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
    assert result.status == "ok" and len(result.scores) == 36 and result.overall == 0.0
