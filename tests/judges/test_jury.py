"""Jury: members' verdicts combined by mean, median or majority, members kept."""

from __future__ import annotations

import json

import pytest

from attune_judge.data import JudgeItem
from attune_judge.judges import Jury, build_judge, combine
from attune_judge.testing import ScriptedEngine, rate_limit_error


def _member(overall: int, **fail: object) -> object:
    reply = {
        "overall_score": overall,
        "emotional_appropriateness": 1,
        "helpfulness": 1,
        "tone_match": 1,
        "rationale": "r",
    }
    engine = ScriptedEngine(lambda m: json.dumps(reply), model=f"m{overall}", **fail)
    return build_judge("attunebench-reference", engine.lm(f"scripted/m{overall}"))


@pytest.mark.parametrize(
    ("method", "expected"), [("mean", 4.0), ("median", 3.0), ("majority", 3.0)]
)
def test_methods_combine_each_score(item: JudgeItem, method: str, expected: float) -> None:
    # overall_score per member: 3, 3, 6 -> mean 4, median 3, majority 3
    jury = Jury([_member(3), _member(3), _member(6)], method=method)  # type: ignore[list-item]
    result = jury.judge(item)
    assert result.status == "ok"
    assert result.scores["overall_score"] == expected
    assert result.scores["helpfulness"] == 1.0
    assert len(result.details["members"]) == 3
    assert [m["scores"]["overall_score"] for m in result.details["members"]] == [3, 3, 6]
    assert result.usage.calls == 3


def test_combine_examples() -> None:
    assert combine([1, 2, 6], "mean") == 3.0
    assert combine([1, 2, 6], "median") == 2.0
    assert combine([0, 0, 1], "majority") == 0.0
    assert combine([0, 1], "majority") == 0.5


def test_parse_failure_of_one_member_is_left_out_and_counted(item: JudgeItem) -> None:
    broken = build_judge("attunebench-reference", ScriptedEngine(lambda m: "?").lm("scripted/x"))
    jury = Jury([_member(2), broken, _member(4)], method="mean")  # type: ignore[list-item]
    result = jury.judge(item)
    assert result.status == "ok" and result.details["failed"] == 1
    assert result.scores["overall_score"] == 3.0  # (2 + 4) / 2
    assert result.details["members"][1]["status"] == "parse_error"


def test_retryable_member_failure_makes_the_jury_retryable(item: JudgeItem) -> None:
    flaky = _member(5, fail=lambda m: rate_limit_error())
    jury = Jury([_member(2), flaky], method="mean")  # type: ignore[list-item]
    result = jury.judge(item)
    assert result.status == "lm_error" and result.details["retryable"] is True


def test_pairwise_majority_verdict(pair: JudgeItem) -> None:
    def member(verdict_by_position: dict[str, str], name: str) -> object:
        # answers by position only -> "A","A" => inconsistent; content-based -> consistent
        engine = ScriptedEngine(lambda m: json.dumps(verdict_by_position | {"rationale": "r"}))
        return build_judge("attunebench-pairwise", engine.lm(f"scripted/{name}"))

    jury = Jury(
        [
            member({"verdict": "tie"}, "a"),
            member({"verdict": "tie"}, "b"),
            member({"verdict": "A"}, "c"),
        ],
        method="majority",
    )  # type: ignore[list-item]
    result = jury.judge(pair)
    # members: tie, tie, inconsistent -> majority tie
    assert [m["verdict"] for m in result.details["members"]] == ["tie", "tie", "inconsistent"]
    assert result.verdict == "tie"


def test_jury_id_depends_on_members_and_method(item: JudgeItem) -> None:
    a = Jury([_member(1), _member(2)], method="mean")  # type: ignore[list-item]
    b = Jury([_member(1), _member(2)], method="median")  # type: ignore[list-item]
    assert a.judge_id != b.judge_id and a.judge_id.startswith("jury-")
