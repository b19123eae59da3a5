"""``align_judge`` end to end on a scripted judge that learns from demonstrations."""

from __future__ import annotations

from pathlib import Path

import pytest

from attune_judge.align import (
    AlignConfig,
    OptimizerSettings,
    align_judge,
    is_aligned_judge,
    load_aligned_judge,
)
from attune_judge.data import ChatMessage, JudgeItem
from attune_judge.errors import UserError
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.testing import ScriptedEngine
from tests.align._engine import TRUTH, learner, write_labels

RUBRIC = "empathic-communication-epitome"


def _config(tmp_path: Path, name: str = "labeled-fewshot", **kw: object) -> AlignConfig:
    items, ratings = write_labels(tmp_path)
    opt = OptimizerSettings(name=name, max_labeled_demos=8, num_candidates=2)  # type: ignore[arg-type]
    return AlignConfig(
        labels=str(ratings),
        items=items,
        rubric=RUBRIC,
        out=tmp_path / "aligned",
        optimizer=opt,
        B=400,
        lm="scripted/judge",
        **kw,  # type: ignore[arg-type]
    )


def test_labeled_fewshot_truly_improves_and_the_artifact_judges(tmp_path: Path) -> None:
    engine = ScriptedEngine(learner)
    lines: list[str] = []
    res = align_judge(_config(tmp_path), lm=engine.lm(), echo=lines.append)
    proof = res.proof
    assert proof.before.estimate is not None and proof.after.estimate is not None
    # zero-shot answers 1 everywhere; with same-kind demonstrations it copies the truth
    assert proof.after.estimate > proof.before.estimate + 0.2
    assert proof.distinguishable and "better" in proof.verdict
    # the test split has 9 conversations, below MIN_CLUSTERS: the verdict says so
    assert proof.n_clusters == 9 and "Caution: only 9 held-out conversations" in proof.verdict
    assert proof.human_ceiling is not None and proof.length_baseline.estimate is not None
    assert any(line.startswith("budget estimate") for line in lines)
    assert res.budget.optimizer_calls == 0 and res.optimizer_calls == 0
    assert res.evaluation_calls == 2 * len(res.split.items["test"])
    out = Path(res.out)
    assert is_aligned_judge(out)
    for f in ("program.json", "rubric.json", "split.json", "report.md", "summary.json"):
        assert (out / f).is_file(), f
    # the artifact is a judge: build_judge(PATH) and load_aligned_judge agree, ids differ
    judge = build_judge(str(out), engine.lm())
    base = build_judge(RUBRIC, engine.lm(), JudgeOptions(use_reference=False))
    assert judge.judge_id != base.judge_id
    assert judge.judge_id == load_aligned_judge(out, engine.lm()).judge_id
    raw = load_aligned_judge(out, engine.lm(), apply_score_map=False)
    assert raw.judge_id not in (judge.judge_id, base.judge_id)
    item = JudgeItem(
        item_id="new",
        conversation_id="new",
        context=[ChatMessage(role="user", content="hi")],
        candidate="curious reply never seen",
        candidate_model="bot",
    )
    got = raw.judge(item)
    assert got.status == "ok"
    assert tuple(int(v) for v in got.scores.values()) == TRUTH["curious"]
    assert base.judge(item).scores == dict.fromkeys(got.scores, 1.0)
    mapped = judge.judge(item)
    assert mapped.details["raw_scores"] == got.scores


def test_bootstrap_random_search_improves_without_touching_the_test_split(tmp_path: Path) -> None:
    engine = ScriptedEngine(learner)
    res = align_judge(_config(tmp_path, "bootstrap-fewshot"), lm=engine.lm(), echo=lambda s: None)
    assert res.proof.improvement.estimate is not None and res.proof.improvement.estimate > 0.2
    test = set(res.split.items["test"])
    assert res.metric_item_ids and not test & set(res.metric_item_ids)
    assert res.demo_item_ids and not test & set(res.demo_item_ids)
    assert 0 < res.optimizer_calls <= res.budget.optimizer_calls


def test_budget_above_max_calls_refuses_before_any_call(tmp_path: Path) -> None:
    engine = ScriptedEngine(learner)
    with pytest.raises(UserError, match="exceeds --max-calls"):
        align_judge(
            _config(tmp_path, "bootstrap-fewshot", max_calls=10), lm=engine.lm(), echo=print
        )
    assert engine.calls == 0
    with pytest.raises(UserError, match="already exists"):
        (tmp_path / "aligned").mkdir()
        (tmp_path / "aligned" / "x").write_text("x")
        align_judge(_config(tmp_path), lm=engine.lm(), echo=print)


@pytest.mark.parametrize("name", ["mipro", "gepa"])
def test_mipro_and_gepa_run_within_the_estimate(tmp_path: Path, name: str) -> None:
    engine = ScriptedEngine(learner)
    res = align_judge(_config(tmp_path, name, max_calls=400), lm=engine.lm(), echo=lambda s: None)
    assert 0 < res.optimizer_calls <= res.budget.optimizer_calls
    assert engine.calls <= 400
    assert not set(res.metric_item_ids) & set(res.split.items["test"])
    if name == "mipro":  # demonstrations are part of its search: it finds the same-kind ones
        assert res.proof.distinguishable and res.proof.improvement.estimate > 0.2  # type: ignore[operator]
    else:  # GEPA rewrites instructions only; this engine learns only from demonstrations
        assert res.proof.improvement.estimate == 0.0
        assert "not distinguishable" in res.proof.verdict


def test_gepa_stays_within_a_tight_max_calls(tmp_path: Path) -> None:
    """GEPA checks its metric-call cap only between rounds: the cap it is given leaves room for
    the round begun below it and for the reflections, so every call (optimizer and held-out
    evaluation, counted by the model itself) stays within --max-calls (issue 29: 216 > 200)."""
    engine = ScriptedEngine(learner)
    max_calls = 110
    res = align_judge(_config(tmp_path, "gepa", max_calls=max_calls), lm=engine.lm(), echo=print)
    assert res.optimizer_calls > 0 and res.budget.total_calls <= max_calls  # GEPA did run
    assert res.optimizer_calls <= res.budget.optimizer_calls
    assert res.optimizer_calls + res.evaluation_calls <= max_calls
    assert engine.calls <= max_calls
