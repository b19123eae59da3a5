"""A scripted judge model for sensitivity runs, through the real ``dspy.LM(engine=...)`` path.

Candidates are ``CAND model=<m> conv=<c> turn=<t> END``. The scripted judge scores a candidate
``BASE[m] + noise(m, c, t)`` on 1..7 (noise in {-1, 0, +1}), except:

- when the prompt contains ``SWAPMARK`` (a paraphrase built to swap two models), models ``a``
  and ``b`` exchange their base levels;
- when the criteria say ``integer 1-5`` (a scale change), the 1..7 score s is mapped to
  ``round_half_up(1 + (s - 1) * 4 / 6)`` on 1..5 (order preserved).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from attune_judge.data import ChatMessage, JudgeItem, Judgment, read_jsonl, write_jsonl
from attune_judge.lm import LMSettings

CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
BASE = {"a": 6, "b": 4, "c": 2}
_CAND = re.compile(r"CAND model=(\w+) conv=(\w+) turn=(\d+) END")


def noise(model: str, conv: str, turn: int) -> int:
    """-1, 0 or +1, deterministic per (model, conversation, turn)."""
    return (int(conv.removeprefix("c")) + 2 * turn + "abc".index(model)) % 3 - 1


def write_items(path: Path, n_conv: int = 8, n_turns: int = 2) -> list[JudgeItem]:
    """A JudgeItem JSONL of models a, b, c × conversations × turns."""
    items = []
    for c in range(n_conv):
        for t in range(1, n_turns + 1):
            for m in BASE:
                items.append(
                    JudgeItem(
                        item_id=f"c{c}:{t}:{m}",
                        conversation_id=f"c{c}",
                        turn=t,
                        context=[ChatMessage(role="user", content=f"I feel low today ({c}/{t}).")],
                        candidate=f"CAND model={m} conv=c{c} turn={t} END",
                        candidate_model=m,
                        reference="That sounds hard. Do you want to talk about it?",
                    )
                )
    write_jsonl(path, items)
    return items


def raw_score(model: str, conv: str, turn: int, *, swap: bool) -> int:
    """The 1..7 score before any scale change."""
    level = BASE[{"a": "b", "b": "a"}.get(model, model)] if swap else BASE[model]
    return min(7, max(1, level + noise(model, conv, turn)))


def answer(messages: list[dict[str, str]]) -> str:
    """The scripted judge's JSON answer."""
    text = "\n".join(m["content"] for m in messages)
    found = _CAND.findall(messages[-1]["content"])
    assert len(found) == 1, messages[-1]["content"][:400]
    model, conv, turn = found[0]
    s: float = raw_score(model, conv, int(turn), swap="SWAPMARK" in text)
    if "integer 1-5" in text:
        s = math.floor(1 + (s - 1) * 4 / 6 + 0.5)
    criteria = [c for c in CRITERIA if f"- {c} (" in text]
    return json.dumps({**dict.fromkeys(criteria, int(s)), "rationale": "scripted"})


def variants_run(tmp_path: Path, name: str, api_base: str) -> dict[str, object]:
    """The settings of a sensitivity run on 3 conversations x 3 candidates and two variants
    (rescaled, shuffled) against ``api_base`` (serving :func:`answer`); no ``out``."""
    import yaml

    data = tmp_path / "items.jsonl"
    write_items(data, n_conv=3, n_turns=1)
    variants = tmp_path / "variants.yaml"
    spec = {
        "name": name,
        "base": {"rubric": "attunebench-reference", "judge": {"reasoning": False}},
        "perturbations": [
            {"name": "scale-1-5", "kind": "change_scale", "min": 1, "max": 5},
            {"name": "shuffled", "kind": "shuffle_criteria", "seed": 3},
        ],
        "analysis": {"B": 200, "seed": 1},
    }
    variants.write_text(yaml.safe_dump(spec), "utf-8")
    return {
        "data": data,
        "variants": variants,
        "lm": "openai/fake",
        "lm_settings": LMSettings(api_base=api_base),
        "quiet": True,
        "fsync": False,
    }


def run_scores(run: Path) -> set[tuple[str, str, str]]:
    """(item, judge, scores) of every judgment of a run directory."""
    return {
        (j.item_id, j.judge_id, json.dumps(j.scores, sort_keys=True))
        for j in read_jsonl(run / "judgments.jsonl", Judgment)
    }
