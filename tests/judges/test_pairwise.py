"""Pairwise judge: both orders always asked, reconciled, raw verdicts kept."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable

import pytest

from attune_judge.data import JudgeItem
from attune_judge.judges import PairwiseJudge, build_judge
from attune_judge.testing import Messages, ScriptedEngine
from tests.judges.conftest import BRUSH_OFF, WARM


def _reply_a(messages: Messages) -> str:
    match = re.search(
        r"\[\[ ## reply_a ## \]\]\n(.*?)\n\n\[\[ ## reply_b", messages[-1]["content"], re.S
    )
    assert match is not None
    return match.group(1)


def _judge(decide: Callable[[Messages], str]) -> tuple[PairwiseJudge, ScriptedEngine]:
    engine = ScriptedEngine(lambda m: json.dumps({"verdict": decide(m), "rationale": "r"}))
    judge = build_judge("attunebench-pairwise", engine.lm())
    assert isinstance(judge, PairwiseJudge)
    return judge, engine


@pytest.mark.parametrize(
    ("first", "second_back", "expected"),
    [
        ("A", "A", "A"),
        ("B", "B", "B"),
        ("tie", "tie", "tie"),
        ("A", "B", "inconsistent"),
        ("B", "A", "inconsistent"),
        ("A", "tie", "tie"),
        ("tie", "B", "tie"),
    ],
)
def test_reconcile_table(pair: JudgeItem, first: str, second_back: str, expected: str) -> None:
    """``first``: the verdict in the A, B order; ``second_back``: the verdict in the B, A
    order mapped back to the pair's A and B (the model answered the swapped letter)."""
    swapped = {"A": "B", "B": "A", "tie": "tie"}[second_back]
    judge, _ = _judge(lambda m: first if _reply_a(m) == BRUSH_OFF else swapped)
    result = judge.judge(pair)
    assert result.status == "ok" and result.verdict == expected
    assert (result.details["order_ab"], result.details["order_ba"]) == (first, swapped)


def test_content_based_preference_is_consistent(pair: JudgeItem) -> None:
    # the model prefers the warm reply wherever it is shown
    judge, engine = _judge(lambda m: "A" if _reply_a(m) == WARM else "B")
    result = judge.judge(pair)
    assert engine.calls == 2
    shown_first = [_reply_a(m) for m in engine.requests]
    assert shown_first == [BRUSH_OFF, WARM]  # A then B order, then swapped
    assert result.status == "ok"
    assert result.verdict == "B"  # the pair's B is the warm reply
    assert result.details["order_ab"] == "B" and result.details["order_ba"] == "A"
    assert result.scores == {"a_win": 0.0} and result.overall == 0.0
    assert result.usage.calls == 2


def test_position_bias_is_inconsistent(pair: JudgeItem) -> None:
    judge, _ = _judge(lambda m: "A")
    result = judge.judge(pair)
    assert result.status == "ok"
    assert result.verdict == "inconsistent"
    assert (result.details["order_ab"], result.details["order_ba"]) == ("A", "A")
    assert result.scores == {} and result.overall is None


def test_tie_in_one_order_gives_tie(pair: JudgeItem) -> None:
    judge, _ = _judge(lambda m: "tie" if _reply_a(m) == BRUSH_OFF else "A")
    result = judge.judge(pair)
    assert result.verdict == "tie" and result.scores == {"a_win": 0.5}


def test_question_text_comes_from_the_rubric(pair: JudgeItem) -> None:
    judge, engine = _judge(lambda m: "tie")
    judge.judge(pair)
    assert "Which response feels more supportive?" in engine.requests[0][-1]["content"]
    custom = pair.model_copy(update={"metadata": {**pair.metadata, "question": "custom:Kinder?"}})
    judge.judge(custom)
    assert "[[ ## question ## ]]\nKinder?" in engine.requests[-1][-1]["content"]


def test_unparseable_order_is_a_parse_error_with_both_raw(pair: JudgeItem) -> None:
    replies = iter(['{"verdict": "A", "rationale": "r"}', "B is better"])
    engine = ScriptedEngine(lambda m: next(replies))
    result = build_judge("attunebench-pairwise", engine.lm()).judge(pair)
    assert result.status == "parse_error"
    assert result.raw_output == "B is better"
    assert result.details["order_ab"] == "A" and result.details["order_ba"] is None
    assert result.verdict is None


def test_missing_other_response_is_refused(pair: JudgeItem) -> None:
    judge, engine = _judge(lambda m: "A")
    broken = pair.model_copy(update={"metadata": {"question": "PW4"}})
    result = judge.judge(broken)
    assert result.status == "refused" and engine.calls == 0


def test_async_runs_both_orders(pair: JudgeItem) -> None:
    judge, engine = _judge(lambda m: "A" if _reply_a(m) == WARM else "B")
    result = asyncio.run(judge.ajudge(pair))
    assert result.verdict == "B" and engine.calls == 2
