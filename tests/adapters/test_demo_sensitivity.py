"""Demo part d (a short rubric-sensitivity run) with a scripted judge model (no LM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.demo import run_demo
from attune_judge.demo._sensitivity import _first_turns, demo_sensitivity
from attune_judge.errors import UserError
from attune_judge.testing import ScriptedEngine

CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
LEVEL = {"human_edited": 6, "llm_improved": 4, "original": 2}


def _engine() -> ScriptedEngine:
    """Scores every criterion by which pseudo-model wrote the candidate (found by its text),
    whatever the order of the criteria in the prompt."""
    items = _first_turns(3)
    others = [it for it in items if it.candidate_model != "human_edited"]

    def answer(messages: list[dict[str, str]]) -> str:
        last = messages[-1]["content"]
        model = next((it.candidate_model for it in others if it.candidate in last), "human_edited")
        text = "\n".join(m["content"] for m in messages)
        criteria = [c for c in CRITERIA if f"- {c} (" in text]
        assert criteria, text[:400]
        return json.dumps({**dict.fromkeys(criteria, LEVEL[model]), "rationale": "scripted"})

    return ScriptedEngine(answer)


def test_first_turns_of_three_sample_conversations() -> None:
    items = _first_turns(3)
    # three conversations, one turn each, the three pseudo-models per turn
    assert len({it.conversation_id for it in items}) == 3
    assert len({(it.conversation_id, it.turn) for it in items}) == 3
    assert sorted(it.candidate_model for it in items) == sorted([*LEVEL] * 3)


def test_an_order_blind_judge_is_stable_under_shuffled_criteria(tmp_path: Path) -> None:
    engine = _engine()
    part = demo_sensitivity(
        tmp_path, lm="scripted", n_conversations=3, B=100, lm_factory=lambda lm: engine.lm()
    )
    assert (part.n_conversations, part.n_items) == (3, 9)
    assert part.n_run == 18  # 9 items x (base + shuffled), each judged once
    variants = part.block["variants"]
    # the scripted scores do not depend on criterion order: identical scores, identical ranks,
    # so Kendall's τ with the base is exactly 1 and nothing flips
    assert variants["shuffled"]["tau"]["estimate"] == pytest.approx(1.0)
    # mean normalised scores on the 1-7 scale: (6 - 1) / 6 and (4 - 1) / 6
    board = {r["model"]: r["score"]["estimate"] for r in variants["shuffled"]["leaderboard"]}
    assert board["human_edited"] == pytest.approx(5 / 6)
    assert board["llm_improved"] == pytest.approx(3 / 6)
    # τ = 1 everywhere, but 3 conversations are too few for a claim either way (issue 17)
    assert variants["shuffled"]["stable"] is False
    assert variants["shuffled"]["verdict"] == "inconclusive"
    assert not part.block.get("flips")
    assert part.summary[0].startswith("d. rubric sensitivity (scripted, 3 synthetic")
    assert "Kendall τ to the base +1.00" in part.summary[1]
    assert part.summary[1].endswith("; inconclusive")


def test_demo_part_d_in_the_report(tmp_path: Path) -> None:
    engine = _engine()
    run = run_demo(
        tmp_path / "demo",
        B=100,
        parts=("d",),
        local_lm="scripted",
        sensitivity_lm_factory=lambda lm: engine.lm(),
    )
    md = Path(run.report_md).read_text()
    assert "## d. Rubric sensitivity" in md
    assert "synthetic sample conversations" in md  # the honest label
    assert "### Ranking stability across variants" in md
    assert "## a. " not in md
    assert any(line.startswith("d. rubric sensitivity") for line in run.summary)
    with pytest.raises(UserError, match="at least two"):
        demo_sensitivity(tmp_path / "x", n_conversations=1)


def test_rerun_with_other_settings_names_the_folder(tmp_path: Path) -> None:
    engine = _engine()
    demo_sensitivity(tmp_path, lm="scripted", B=100, lm_factory=lambda lm: engine.lm())
    # same settings again: resumed, nothing judged twice
    again = demo_sensitivity(tmp_path, lm="scripted", B=100, lm_factory=lambda lm: engine.lm())
    assert again.n_run == 0
    with pytest.raises(UserError, match="holds a run with other settings"):
        demo_sensitivity(
            tmp_path, lm="scripted", n_conversations=3, B=100, lm_factory=lambda lm: engine.lm()
        )
