"""Demo part d (a short rubric-sensitivity run) with a scripted judge model (no LM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge import shipped_dir
from attune_judge.data import JudgeItem, read_jsonl, read_judgments
from attune_judge.demo import run_demo
from attune_judge.errors import UserError
from attune_judge.runner import load_judge_items
from attune_judge.runs import DemoSummary, SensitivityBlock, read_summary
from attune_judge.testing import ScriptedEngine

CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
LEVEL = {"human_edited": 6, "llm_improved": 4, "original": 2}


def _sample_items() -> list[JudgeItem]:
    return load_judge_items(shipped_dir("data") / "samples" / "attunebench")


def _engine() -> ScriptedEngine:
    """Scores every criterion by which pseudo-model wrote the candidate (found by its text),
    whatever the order of the criteria in the prompt."""
    others = [it for it in _sample_items() if it.candidate_model != "human_edited"]

    def answer(messages: list[dict[str, str]]) -> str:
        last = messages[-1]["content"]
        model = next((it.candidate_model for it in others if it.candidate in last), "human_edited")
        text = "\n".join(m["content"] for m in messages)
        criteria = [c for c in CRITERIA if f"- {c} (" in text]
        assert criteria, text[:400]
        return json.dumps({**dict.fromkeys(criteria, LEVEL[model]), "rationale": "scripted"})

    return ScriptedEngine(answer)


def _demo_d(out: Path, engine: ScriptedEngine, conversations: int = 2) -> list[str]:
    run = run_demo(
        out,
        B=100,
        parts=("d",),
        local_lm="scripted",
        sensitivity_conversations=conversations,
        sensitivity_lm_factory=lambda lm: engine.lm(),
    )
    return run.summary


def _block(out: Path) -> SensitivityBlock:
    summary = read_summary(out)
    assert isinstance(summary, DemoSummary) and summary.sensitivity is not None
    return summary.sensitivity


def test_an_order_blind_judge_is_stable_under_shuffled_criteria(tmp_path: Path) -> None:
    engine = _engine()
    lines = _demo_d(tmp_path, engine, conversations=3)
    # the items: the first annotated turn of each of the first three sample conversations
    # (by id), with the three pseudo-models' replies
    samples = _sample_items()
    first = {
        c: min(it.turn for it in samples if it.conversation_id == c and it.turn is not None)
        for c in sorted({it.conversation_id for it in samples})[:3]
    }
    items = read_jsonl(tmp_path / "d-items.jsonl", JudgeItem)
    assert {(it.conversation_id, it.turn) for it in items} == set(first.items())
    assert sorted(it.candidate_model for it in items) == sorted([*LEVEL] * 3)
    # 9 items x (base + shuffled), each judged once
    judgments = read_judgments(tmp_path / "d-sensitivity" / "judgments.jsonl")
    assert engine.calls == len(judgments) == 18
    assert len({(j.item_id, j.judge_id) for j in judgments}) == 18
    variants = _block(tmp_path).variants
    # the scripted scores do not depend on criterion order: identical scores, identical ranks,
    # so Kendall's τ with the base is exactly 1 and nothing flips
    shuffled = variants["shuffled"]
    assert shuffled.tau is not None and shuffled.tau.estimate == pytest.approx(1.0)
    # mean normalised scores on the 1-7 scale: (6 - 1) / 6 and (4 - 1) / 6
    assert shuffled.leaderboard is not None
    board = {r.model: r.score.estimate for r in shuffled.leaderboard}
    assert board["human_edited"] == pytest.approx(5 / 6)
    assert board["llm_improved"] == pytest.approx(3 / 6)
    # τ = 1 everywhere, but 3 conversations are too few for a claim either way (issue 17)
    assert shuffled.stable is False
    assert shuffled.verdict == "inconclusive"
    assert not _block(tmp_path).flips
    d = lines.index(next(line for line in lines if line.startswith("d. ")))
    assert lines[d].startswith("d. rubric sensitivity (scripted, 3 synthetic")
    assert "Kendall τ to the base +1.00" in lines[d + 1]
    assert lines[d + 1].endswith("; inconclusive")


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
        run_demo(tmp_path / "x", parts=("d",), sensitivity_conversations=1)


def test_rerun_with_other_settings_names_the_folder(tmp_path: Path) -> None:
    engine = _engine()
    _demo_d(tmp_path, engine)
    judged = engine.calls
    assert judged == 12  # 2 turns x 3 replies x (base + shuffled)
    # same settings again: resumed, nothing judged twice
    _demo_d(tmp_path, engine)
    assert engine.calls == judged
    assert len(read_judgments(tmp_path / "d-sensitivity" / "judgments.jsonl")) == judged
    with pytest.raises(UserError, match="holds a run with other settings"):
        _demo_d(tmp_path, engine, conversations=3)
