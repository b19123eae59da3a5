"""The shipped calibration heads of the embedded model (``calibration/heads/<set>/``, fitted by
``benchmarks/fit_calibrated_heads.py`` with ``align --method calibrate``): ``validate --lm local``
applies the set's head to its own judgments and prints the calibrated row beside the
uncalibrated one and the baselines, on the head's held-out (test-split) items only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from attune_judge._resources import shipped_dir
from attune_judge.data import JudgeItem, Judgment, Rating
from attune_judge.judges._aligned import CALIBRATED_FORMAT, aligned_rubric, read_manifest
from attune_judge.judges._calibrated import calibrate_judgment, read_head
from attune_judge.runs import CalibratedBlock
from attune_judge.validate._baselines import baseline_comparison

__all__ = ["HEADS_DIR", "calibrated_comparison", "held_out_items", "shipped_head"]

HEADS_DIR = "heads"
"""Folder under ``calibration/`` holding one calibrated-judge directory per set."""


def shipped_head(set_name: str, lm: str) -> Path | None:
    """The shipped calibrated judge of ``set_name`` fitted on ``lm``'s distributions, if any."""
    try:
        root = shipped_dir("calibration") / HEADS_DIR / set_name
    except FileNotFoundError:
        return None
    if not (root / "aligned-judge.json").is_file():
        return None
    manifest = read_manifest(root)
    if manifest.format != CALIBRATED_FORMAT or manifest.lm != lm or manifest.source != set_name:
        return None
    return root


def held_out_items(set_name: str, lm: str) -> set[str] | None:
    """The item ids of the held-out (test) conversations of the shipped head of ``set_name``
    for ``lm`` (``None``: no such head). The demo judges its local items among these, so the
    head's before/after is shown on items it was not fitted on."""
    root = shipped_head(set_name, lm)
    if root is None:
        return None
    split = json.loads((root / "split.json").read_text(encoding="utf-8"))
    return {str(i) for i in split["items"]["test"]}


def calibrated_comparison(
    set_name: str,
    lm: str,
    items: Sequence[JudgeItem],
    judgments: Sequence[Judgment],
    humans: Sequence[Rating],
    *,
    B: int,
    seed: int,
    judge_name: str,
) -> tuple[list[str], list[str], CalibratedBlock] | None:
    """Terminal lines, Markdown and data: the shipped head's calibrated scores and the raw ones,
    beside the baselines, on the head's test items (``None``: no head, or no judgment with
    distributions among those items)."""
    root = shipped_head(set_name, lm)
    if root is None:
        return None
    manifest = read_manifest(root)
    head = read_head(root, manifest)
    test = held_out_items(set_name, lm) or set()
    by_id = {i.item_id: i for i in items}
    raw = [j for j in judgments if j.item_id in test and j.item_id in by_id]
    if not any(j.details.get("distributions") for j in raw):
        return None
    if len(raw) < 2:  # nothing to compare on (e.g. a few items judged: the demo's part c)
        note = (
            f"the shipped head {root.name} was not compared: {len(raw)} of the judged items "
            "lie in its held-out (test) conversations; agreement needs at least two"
        )
        return (
            [f"   note: {note}"],
            ["", f"Note: {note}."],
            CalibratedBlock(head=root.name, note=note),
        )
    rubric = aligned_rubric(root, manifest)
    calibrated = [calibrate_judgment(head, rubric, j, by_id[j.item_id]) for j in raw]
    # the Brier score and ECE of the calibrated rows are those of the head's distributions
    calibrated = [
        j.model_copy(
            update={
                "details": {
                    **j.details,
                    "distributions": {
                        c: {"probabilities": p} for c, p in j.details["calibrated"].items()
                    },
                }
            }
        )
        if "calibrated" in j.details
        else j
        for j in calibrated
    ]
    test_items = [by_id[j.item_id] for j in raw]
    name = f"{judge_name} (calibrated)"
    lines = [
        f"calibrated with the shipped head {root.name} (artifact {manifest.artifact_hash}) on its "
        f"{len(raw)} held-out items:"
    ]
    md = ["", f"## Calibrated (shipped head, {len(raw)} held-out items)", ""]
    md.append(
        f"The head in `calibration/{HEADS_DIR}/{root.name}` was fitted on this set's train and "
        "dev conversations; these rows use only its test conversations."
    )
    data = CalibratedBlock(head=root.name, artifact_hash=manifest.artifact_hash)
    # every judged item held out (the demo): the raw rows printed above are on the same items
    same_items = {j.item_id for j in raw} == {j.item_id for j in judgments}
    for label, js in ((name, calibrated), (judge_name, raw)):
        b_lines, b_md, b_data = baseline_comparison(
            test_items, js, humans, B=B, seed=seed, judge_name=label
        )
        if label == name or not same_items:
            lines += b_lines
        md += b_md[1:]
        setattr(data, "calibrated" if label == name else "uncalibrated", b_data)
    if same_items:
        lines.append(f"   (uncalibrated {judge_name}: the baselines above, on the same items)")
    return lines, md, data
