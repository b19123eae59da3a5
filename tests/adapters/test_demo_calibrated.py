"""The demo's part c with the embedded model's name: its conversations are the shipped EPITOME
head's held-out ones, and the calibrated row of the same judgments stands beside the raw one
(terminal, summary and report), without another model call. The judge model is scripted; the
head is the shipped one (``calibration/heads/``, in the repository)."""

from __future__ import annotations

import json
import math
import statistics
import zlib
from pathlib import Path

from scipy import stats

from attune_judge import shipped_dir
from attune_judge.data import Judgment, Rating, read_jsonl
from attune_judge.demo import run_demo
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.testing import ScriptedEngine, TokenReply

SET = "empathic-communication-epitome"
HEAD = shipped_dir("calibration") / "heads" / SET


def _lean(messages: list[dict[str, str]]) -> TokenReply:
    """A distribution over 0..2 that moves with the prompt (deterministic)."""
    text = "\n".join(m["content"] for m in messages)
    lean = (zlib.crc32(text.encode()) % 1000) / 1000
    probs = (0.6 - 0.4 * lean, 0.25, 0.15 + 0.4 * lean)
    return TokenReply("1", ({str(k): math.log(p) for k, p in enumerate(probs)},))


def test_demo_part_c_shows_the_shipped_head_on_its_held_out_items(tmp_path: Path) -> None:
    engine = ScriptedEngine(_lean)
    judge = build_judge(SET, engine.lm(), JudgeOptions(score_mode="expected", use_reference=False))
    run = run_demo(
        tmp_path / "d", B=50, parts=("c",), local_items=5, local_lm="local", local_judge=judge
    )
    test_ids = set(json.loads((HEAD / "split.json").read_text())["items"]["test"])
    c = tmp_path / "d" / "c-local-judge"
    judged = read_jsonl(c / "run" / "judgments.jsonl", Judgment)
    # five conversations, all from the head's test split (the first five by id), one call each
    # criterion: the head adds no model call
    assert sorted(j.item_id for j in judged) == sorted(test_ids)[:5]
    assert engine.calls == 5 * 3
    printed = "\n".join(run.summary)
    assert f"calibrated with the shipped head {SET}" in printed
    assert "baselines beside local (calibrated)" in printed
    # the raw rows are printed once: the held-out items are every item judged
    assert printed.count("baselines beside local (Spearman") == 1
    assert "(uncalibrated local: the baselines above, on the same items)" in printed
    block = json.loads((c / "summary.json").read_text())["calibrated"]
    assert block["head"] == SET
    # the raw row's ρ on the total: the judge's mean over criteria against the experts'
    # median of each expert's mean (scipy), on the same five items
    humans = [
        r
        for r in read_jsonl(
            shipped_dir("calibration") / "empathic-communication" / "ratings.jsonl", Rating
        )
        if r.rater_group == "experts" and r.item_id in {j.item_id for j in judged}
    ]
    per: dict[str, dict[str, list[float]]] = {}
    for r in humans:
        per.setdefault(r.item_id, {}).setdefault(r.rater, []).append(float(r.value))  # type: ignore[arg-type]
    ids = sorted(per)
    people = [statistics.median(statistics.mean(v) for v in per[i].values()) for i in ids]
    by = {j.item_id: j for j in judged}
    raw = [statistics.mean(by[i].scores.values()) for i in ids]
    total = block["uncalibrated"]["dimensions"]["total"]["agreement"]
    assert total["n"] == 5
    assert math.isclose(
        total["spearman"]["judge"]["estimate"], stats.spearmanr(raw, people).statistic
    )
    # the calibrated row is another set of scores on the same items
    cal = block["calibrated"]["dimensions"]["total"]["agreement"]
    assert cal["n"] == 5
    assert cal["spearman"]["length"] == total["spearman"]["length"]
    report = Path(run.report_md).read_text()
    assert f"Calibrated by the shipped head {SET}" in report
    assert "held out from the model's shipped calibration head" in report
    assert "| ρ raw | ρ calibrated |" in report.replace("  ", " ")
