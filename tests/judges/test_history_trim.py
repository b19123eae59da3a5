"""DSPy's history lists stay bounded over a long run, and no judgment loses its record."""

from __future__ import annotations

import asyncio
import json

from attune_judge.data import JudgeItem
from attune_judge.judges import build_judge
from attune_judge.testing import ScriptedEngine


def _answer(messages: list[dict[str, str]]) -> str:
    n = len(messages[-1]["content"]) % 7
    return json.dumps(
        {
            "overall_score": 1 + n,
            "emotional_appropriateness": 1,
            "helpfulness": 2,
            "tone_match": 3,
            "rationale": "scripted",
        }
    )


# DSPy keeps up to 10,000 history entries per LM; attune-judge keeps the latest 50 (the
# lm.trim_history docstring's HISTORY_KEEP), trimming when a list reaches twice that
HISTORY_KEEP = 50


def test_histories_are_trimmed_and_every_judgment_is_whole(item: JudgeItem) -> None:
    from dspy.clients import base_lm

    engine = ScriptedEngine(_answer)
    lm = engine.lm(cache=False)
    judge = build_judge("attunebench-reference", lm)
    n = 4 * HISTORY_KEEP + 7  # well past the trim threshold (2 x HISTORY_KEEP)
    results = []
    for k in range(n):
        one = item.model_copy(update={"item_id": f"c1:1:m{k}", "candidate": "x" * k})
        results.append(judge.judge(one))
    results.append(asyncio.run(judge.ajudge(item.model_copy(update={"item_id": "c1:1:async"}))))
    assert engine.calls == n + 1
    assert all(r.status == "ok" and r.usage.calls == 1 for r in results)
    # each judgment's scores are its own answer's (read from its own recorder, not the lists)
    for k, r in enumerate(results[:-1]):
        expected = json.loads(_answer([{"content": engine.requests[k][-1]["content"]}]))
        assert r.scores["overall_score"] == expected["overall_score"]
    predictors = list(judge.program.predictors())  # type: ignore[attr-defined]
    for history in (lm.history, base_lm.GLOBAL_HISTORY, *(p.history for p in predictors)):
        assert len(history) <= 2 * HISTORY_KEEP
    assert len(lm.history) >= HISTORY_KEEP  # the latest calls stay inspectable
