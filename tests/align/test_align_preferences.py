"""``align_judge`` on Preference labels: a pairwise judge optimised to the people's choices
(scripted model that learns from the pairs in its prompt), the held-out proof on verdicts, and
the artifact judging new pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.align import AlignConfig, OptimizerSettings, align_judge, load_align_data
from attune_judge.data import ChatMessage, Preference, read_jsonl
from attune_judge.errors import UserError
from attune_judge.judges import build_judge, pairwise_item
from attune_judge.testing import ScriptedEngine
from tests.align._pair_engine import pair_learner, truth, write_pairs

RUBRIC = "attunebench-pairwise"


def _config(tmp_path: Path, name: str = "labeled-fewshot", **kw: object) -> AlignConfig:
    pairs, prefs = write_pairs(tmp_path)
    opt = OptimizerSettings(name=name, max_labeled_demos=40, num_candidates=1)
    return AlignConfig(
        labels=str(prefs),
        items=pairs,
        rubric=RUBRIC,
        out=tmp_path / "aligned",
        optimizer=opt,
        B=400,
        lm="scripted/judge",
        **kw,
    )


def _people(prefs: Path) -> dict[str, tuple[str, str]]:
    """item id → (p1's choice, p2's choice), read straight from the file."""
    out: dict[str, dict[str, str]] = {}
    for p in read_jsonl(prefs, Preference):
        out.setdefault(p.item_id, {})[p.rater] = str(p.winner)
    return {k: (v["p1"], v["p2"]) for k, v in out.items()}


def test_labeled_fewshot_aligns_a_pairwise_judge_and_the_proof_is_exact(tmp_path: Path) -> None:
    engine = ScriptedEngine(pair_learner)
    lines: list[str] = []
    config = _config(tmp_path)
    res = align_judge(config, lm=engine.lm(), echo=lines.append)
    proof = res.proof
    test = res.split.items["test"]
    n = len(test)
    assert proof.metric == "exact" and proof.n_items == n
    # budget: no optimizer call; 2 orders x (before + after) per test pair
    assert res.budget.optimizer_calls == 0 and res.budget.evaluation_calls == 4 * n
    assert res.evaluation_calls == 4 * n == engine.calls
    assert any(line.startswith("budget estimate") for line in lines)
    # zero-shot the model always says A: opposite winners in the two orders for every pair
    assert proof.inconsistent == {"before": n, "after": 0}
    assert proof.before.estimate == 0.0
    # by hand: the people's choice is p1's when p2 agrees, else a tie; the aligned judge gives
    # the truth (p1's choice); A-always-wins agrees where the choice is A; the ceiling is p1=p2
    people = _people(Path(config.labels))
    target = {i: a if a == b else "tie" for i, (a, b) in people.items()}
    assert proof.after.estimate == pytest.approx(sum(target[i] == people[i][0] for i in test) / n)
    assert proof.position_baseline is not None
    assert proof.position_baseline.estimate == pytest.approx(
        sum(target[i] == "A" for i in test) / n
    )
    assert proof.human_ceiling is not None
    assert proof.human_ceiling.estimate == pytest.approx(
        sum(people[i][0] == people[i][1] for i in test) / n
    )
    assert proof.length_rule == "longer reply wins"
    assert proof.length_baseline.estimate is not None and proof.after.estimate is not None
    assert proof.length_baseline.estimate < proof.after.estimate
    assert proof.distinguishable and "better" in proof.verdict
    assert proof.after_mapped is None and res.manifest.score_map is None
    # the artifact is a pairwise judge with its own id; it judges a new pair by the truth
    out = Path(res.out)
    manifest = json.loads((out / "aligned-judge.json").read_text())
    assert manifest["judge_program"] == "pairwise" and manifest["metric"] == "exact"
    assert manifest["held_out"]["position_baseline"] == proof.position_baseline.estimate
    judge = build_judge(str(out), engine.lm())
    base = build_judge(RUBRIC, engine.lm())
    assert judge.judge_id != base.judge_id
    item = pairwise_item(
        "new",
        "new",
        [ChatMessage(role="user", content="hi")],
        "flat reply never seen . . . . . . . . .",
        "warm reply never seen",
    )
    got = judge.judge(item)
    assert got.status == "ok" and got.verdict == truth("flat", "warm") == "B"
    assert base.judge(item).verdict == "inconsistent"
    report = (out / "report.md").read_text("utf-8")
    assert "position only (A always wins)" in report and "longer reply wins" in report


def test_bootstrap_random_search_on_pairs_never_touches_the_test_split(tmp_path: Path) -> None:
    engine = ScriptedEngine(pair_learner)
    config = _config(tmp_path, "bootstrap-fewshot", metric="half")
    config.optimizer.max_labeled_demos = 8
    res = align_judge(config, lm=engine.lm(), echo=lambda s: None)
    test = set(res.split.items["test"])
    assert res.proof.metric == "half"
    assert res.metric_item_ids and not test & set(res.metric_item_ids)
    assert res.demo_item_ids and not test & set(res.demo_item_ids)
    assert 0 < res.optimizer_calls <= res.budget.optimizer_calls
    assert engine.calls <= res.budget.total_calls
    assert res.proof.improvement.estimate is not None and res.proof.improvement.estimate > 0.3


def test_preference_input_errors_name_the_problem(tmp_path: Path) -> None:
    pairs, prefs = write_pairs(tmp_path, conversations=4)
    with pytest.raises(UserError, match="--items is needed"):
        load_align_data(str(prefs))
    with pytest.raises(UserError, match="pairwise rubric"):
        load_align_data(str(prefs), items=pairs, rubric="attunebench-reference")
    bad = tmp_path / "bad.jsonl"
    lines = prefs.read_text().splitlines()
    record = json.loads(lines[1])
    record["question"] = "PW99"
    bad.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(UserError, match=r"record 2 .*field question: 'PW99'"):
        load_align_data(str(bad), items=pairs)
    with pytest.raises(UserError, match="does not apply to preferences"):
        align_judge(_config(tmp_path, metric="ordinal"), lm=ScriptedEngine(pair_learner).lm())


def test_preferences_join_attunebench_data_by_comparison_id(tmp_path: Path) -> None:
    from attune_judge.data import attunebench_to_preferences, load_attunebench, write_jsonl
    from tests.conftest import SAMPLES

    prefs = attunebench_to_preferences(load_attunebench(SAMPLES))
    path = tmp_path / "prefs.jsonl"
    write_jsonl(path, prefs)
    data, rubric = load_align_data(str(path), items=SAMPLES)
    answered = {p.item_id: p for p in prefs if p.winner is not None}
    assert data.kind == "preferences" and rubric.id == RUBRIC
    assert {li.item.item_id for li in data.items} == set(answered)
    for li in data.items:
        p = answered[li.item.item_id]
        assert li.verdict == p.winner and li.item.candidate == p.text_a
        assert li.item.metadata["other"] == p.text_b and "human_winner" not in li.item.metadata
