"""The shipped calibration heads of the embedded model (``calibration/heads/``, in the
repository): ``validate --lm local`` finds each on its own set; each was fitted on judgments of
the judge ``validate --lm local`` builds today (same judge id: when the embedded judge's
settings change, the heads are stale and this test names the command that refits them); and
its calibrated row is computed on its held-out items only, beside the raw one."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from scipy import stats

from attune_judge import shipped_dir
from attune_judge.data import JudgeItem, Judgment, read_jsonl
from attune_judge.judges._aligned import aligned_rubric, read_manifest
from attune_judge.judges._calibrated import calibrate_judgment, read_head
from attune_judge.lm import LMSettings
from attune_judge.validate import VALIDATION_SETS, load_calibration_set
from attune_judge.validate._calibrated import calibrated_comparison, shipped_head
from attune_judge.validate._scoring import validation_judge

ROOT = shipped_dir("calibration") / "heads"
HEADS = sorted(p.name for p in ROOT.iterdir() if (p / "aligned-judge.json").is_file())


def test_the_heads_are_shipped_sets() -> None:
    assert {
        "empathic-communication-empatheticdialogues",
        "empathic-communication-epitome",
    } <= set(HEADS)
    assert set(HEADS) <= set(VALIDATION_SETS)


@pytest.mark.parametrize("name", HEADS)
def test_a_shipped_head_fits_the_current_judge_and_gives_the_calibrated_row(name: str) -> None:
    root = shipped_head(name, "local")
    assert root is not None and Path(root) == ROOT / name
    assert shipped_head(name, "openai/gpt-4.1-mini") is None  # fitted on the embedded model
    spec = VALIDATION_SETS[name]
    judgments = read_jsonl(root / "judgments.jsonl", Judgment)
    current = validation_judge(spec.rubric, LMSettings(), 0).judge_id
    assert {j.judge_id for j in judgments} == {current}, (
        f"stale head: refit with PYTHONPATH=src python benchmarks/fit_calibrated_heads.py "
        f"--sets {name}"
    )
    humans = [r for r in load_calibration_set(spec.calibration) if spec.humans(r)]
    items = [
        i
        for i in read_jsonl(shipped_dir("data") / spec.calibration / "items.jsonl", JudgeItem)
        if spec.items(i)
    ]
    got = calibrated_comparison(
        name, "local", items, judgments, humans, B=50, seed=0, judge_name="local"
    )
    assert got is not None
    lines, _, data = got
    assert lines[0].startswith(f"calibrated with the shipped head {name}")
    test = set(json.loads((root / "split.json").read_text())["items"]["test"])
    ok = sorted(j.item_id for j in judgments if j.status == "ok" and j.item_id in test)
    assert data.uncalibrated is not None and data.calibrated is not None
    raw_total = data.uncalibrated.dimensions["total"].agreement
    cal_total = data.calibrated.dimensions["total"].agreement
    assert raw_total.n == cal_total.n == len(ok) >= 10
    # the calibrated ρ on the total: the head's scores (mean over criteria) against the
    # people's median of each person's mean, by scipy
    manifest = read_manifest(root)
    head, rubric = read_head(root, manifest), aligned_rubric(root, manifest)
    by_item = {i.item_id: i for i in items}
    by_j = {j.item_id: j for j in judgments}
    per: dict[str, dict[str, list[float]]] = {}
    for r in humans:
        if r.item_id in test and isinstance(r.value, int | float):
            per.setdefault(r.item_id, {}).setdefault(r.rater, []).append(float(r.value))
    people = [statistics.median(statistics.mean(v) for v in per[i].values()) for i in ok]
    criteria = {r.dimension for r in humans}
    cal = []
    for i in ok:
        scores = calibrate_judgment(head, rubric, by_j[i], by_item[i]).scores
        cal.append(statistics.mean(v for c, v in scores.items() if c in criteria))
    assert cal_total.spearman["judge"].estimate == pytest.approx(
        stats.spearmanr(cal, people).statistic
    )
