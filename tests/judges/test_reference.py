"""Reference-graded judge through the real DSPy path with a scripted model."""

from __future__ import annotations

import asyncio
import json

from attune_judge.data import JudgeItem
from attune_judge.judges import JudgeOptions, ReferenceJudge, build_judge
from attune_judge.rubrics import load_rubric
from attune_judge.testing import ScriptedEngine, rate_limit_error

GOOD = {
    "overall_score": 3,
    "emotional_appropriateness": 2,
    "helpfulness": 4,
    "tone_match": 3,
    "rationale": "Generic reassurance.",
}


def _judge(reply: str | dict, **options: bool) -> tuple[ReferenceJudge, ScriptedEngine]:
    text = reply if isinstance(reply, str) else json.dumps(reply)
    engine = ScriptedEngine(lambda m: text)
    judge = build_judge("attunebench-reference", engine.lm(), JudgeOptions(**options))
    assert isinstance(judge, ReferenceJudge)
    return judge, engine


def test_scores_overall_and_normalised(item: JudgeItem) -> None:
    judge, engine = _judge(GOOD)
    result = judge.judge(item)
    assert result.status == "ok"
    assert result.scores == {
        "overall_score": 3,
        "emotional_appropriateness": 2,
        "helpfulness": 4,
        "tone_match": 3,
    }
    # mean (3 + 2 + 4 + 3) / 4 = 3; normalised (3 - 1) / 6 = 1/3
    assert result.overall == 3.0
    assert abs(result.normalized - 1 / 3) < 1e-12
    assert result.rationale == "Generic reassurance."
    assert result.usage.calls == 1 and result.usage.prompt_tokens > 0
    assert (result.conversation_id, result.candidate_model) == ("c1", "original")
    assert engine.calls == 1


def test_conversation_text_is_data_not_instructions(item: JudgeItem) -> None:
    judge, engine = _judge(GOOD)
    judge.judge(item)
    system, user = engine.requests[0][0]["content"], engine.requests[0][-1]["content"]
    assert item.candidate not in system and item.reference not in system  # type: ignore[operator]
    assert item.context[0].content not in system
    assert "[[ ## candidate_reply ## ]]\n" + item.candidate in user
    assert "[[ ## reference_reply ## ]]\n" + str(item.reference) in user
    assert load_rubric("attunebench-reference").instructions in system


def test_reference_can_be_withheld(item: JudgeItem) -> None:
    judge, engine = _judge(GOOD, use_reference=False)
    assert judge.judge(item).status == "ok"
    assert str(item.reference) not in engine.requests[0][-1]["content"]
    with_ref, _ = _judge(GOOD)
    assert judge.judge_id != with_ref.judge_id
    assert (judge.spec.options or {})["use_reference"] is False


def test_reasoning_variant_asks_for_reasoning_first(item: JudgeItem) -> None:
    judge, engine = _judge({"reasoning": "It brushes off the feeling.", **GOOD}, reasoning=True)
    result = judge.judge(item)
    assert result.status == "ok"
    assert result.details["reasoning"] == "It brushes off the feeling."
    assert "`reasoning`" in engine.requests[0][-1]["content"]


def test_out_of_scale_answer_is_a_parse_error_with_raw_text(item: JudgeItem) -> None:
    reply = json.dumps({**GOOD, "helpfulness": 9})
    judge, _ = _judge(reply)
    result = judge.judge(item)
    assert result.status == "parse_error"
    assert result.raw_output == reply
    assert result.scores == {} and result.overall is None and result.normalized is None
    assert "helpfulness" in (result.error or "")


def test_not_json_is_a_parse_error(item: JudgeItem) -> None:
    judge, engine = _judge("def score(): return 7")
    result = judge.judge(item)
    assert engine.calls == 1  # no hidden second attempt
    assert result.status == "parse_error"
    assert result.raw_output == "def score(): return 7"
    assert result.overall is None


def test_missing_field_is_a_parse_error(item: JudgeItem) -> None:
    partial = {k: v for k, v in GOOD.items() if k != "tone_match"}
    judge, _ = _judge(partial)
    assert judge.judge(item).status == "parse_error"


def test_rate_limit_is_a_retryable_lm_error(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: json.dumps(GOOD), fail=lambda m: rate_limit_error())
    result = build_judge("attunebench-reference", engine.lm()).judge(item)
    assert result.status == "lm_error"
    assert result.details["retryable"] is True
    assert "rate limit" in (result.error or "")


def test_other_lm_failure_is_not_retryable(item: JudgeItem) -> None:
    from dspy.lm15 import AuthError

    engine = ScriptedEngine(lambda m: "{}", fail=lambda m: AuthError("bad key", provider="x"))
    result = build_judge("attunebench-reference", engine.lm()).judge(item)
    assert result.status == "lm_error"
    assert result.details["retryable"] is False


def test_item_without_reference_is_refused_not_scored(item: JudgeItem) -> None:
    judge, engine = _judge(GOOD)
    result = judge.judge(item.model_copy(update={"reference": None}))
    assert result.status == "refused" and result.details["reason"] == "no_reference"
    assert engine.calls == 0


def test_async_judging_matches_sync(item: JudgeItem) -> None:
    judge, _ = _judge(GOOD)
    result = asyncio.run(judge.ajudge(item))
    assert result.status == "ok" and result.overall == 3.0
    # the name promises equality with the sync path: compare every scored field
    sync = judge.judge(item)
    fields = ("status", "scores", "overall", "normalized", "rationale", "item_id", "judge_id")
    assert [getattr(result, f) for f in fields] == [getattr(sync, f) for f in fields]
    assert result.scores == {k: float(v) for k, v in GOOD.items() if k != "rationale"}


def test_judge_id_follows_rubric_model_and_decoding(item: JudgeItem) -> None:
    engine = ScriptedEngine(lambda m: json.dumps(GOOD))
    a = build_judge("attunebench-reference", engine.lm())
    b = build_judge("attunebench-reference", engine.lm())
    c = build_judge("attunebench-reference", engine.lm(temperature=0.7))
    d = build_judge("attune-empathy-anchored", engine.lm())
    assert a.judge_id == b.judge_id
    assert len({a.judge_id, c.judge_id, d.judge_id}) == 3
    rubric = load_rubric("attunebench-reference")
    assert a.spec.rubric == {
        "id": rubric.id,
        "version": rubric.version,
        "hash": rubric.content_hash,
    }
    assert a.spec.lm.temperature == 0.0 and c.spec.lm.temperature == 0.7
    assert a.judge(item).judge_id == a.judge_id
