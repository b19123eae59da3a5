"""Real judge programs on scripted DSPy engines, and JudgeItem files for them.

Everything here goes through the real ``dspy.LM(engine=...)`` path: the judge's Signature,
the JSON adapter, DSPy's cache (when enabled) and the judge's failure classification.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from attune_judge.data import write_jsonl
from attune_judge.rubrics import load_rubric
from attune_judge.testing import ScriptedEngine
from tests.runner._fakes import make_items

CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
_CAND = re.compile(r"CAND-(\d+)-END")


def candidate_number(messages: list[dict[str, str]]) -> int:
    """The ``n`` of the ``CAND-n-END`` candidate text inside a judge request."""
    found = _CAND.findall(messages[-1]["content"])
    assert len(found) == 1, messages[-1]["content"][:500]
    return int(found[0])


def score_of(n: int) -> int:
    """The scripted judge's score for candidate ``n``: 1 + n mod 7."""
    return 1 + n % 7


def scripted_answer(messages: list[dict[str, str]]) -> str:
    """A valid JSON verdict: every criterion ``score_of(n)``."""
    s = score_of(candidate_number(messages))
    return json.dumps({**dict.fromkeys(CRITERIA, s), "rationale": "scripted"})


def write_items(
    path: Path, n_conv: int, n_turns: int, models: tuple[str, ...] = ("a", "b")
) -> list[Any]:
    """A JudgeItem JSONL whose candidates are ``CAND-<index>-END``; returns the items."""
    items = make_items(n_conv, n_turns, models)
    for k, item in enumerate(items):
        item.candidate = f"CAND-{k}-END"
    write_jsonl(path, items)
    return items


def reference_judge(engine: ScriptedEngine, **lm_kwargs: Any) -> Any:
    """The real reference-graded judge (attunebench-reference rubric) on ``engine``."""
    try:
        from attune_judge.judges import ReferenceJudge  # type: ignore[attr-defined]
    except ImportError:  # until the judges package re-exports it
        from attune_judge.judges import ReferenceJudge
    return ReferenceJudge(load_rubric("attunebench-reference"), engine.lm(**lm_kwargs))
