"""A calibrated judge fitted on a shipped set, then ``validate``: with ``--judge DIR`` only the
head's test split is judged; a plain ``validate`` of the same model prints the shipped head's
calibrated row beside the uncalibrated one (the head's held-out items only)."""

from __future__ import annotations

import json
import math
import shutil
import zlib
from pathlib import Path
from typing import Any

import pytest

from attune_judge.align import AlignConfig, calibrate_judge
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.testing import ScriptedEngine, TokenReply
from attune_judge.validate import validate_judge

SET = "empathic-communication-epitome"


def by_length(messages: list[dict[str, str]]) -> TokenReply:
    """A distribution over 0..2 that leans up with the prompt's length (deterministic)."""
    text = "\n".join(m["content"] for m in messages)
    lean = (len(text) % 400) / 400 + (zlib.crc32(text.encode()) % 7) / 70
    probs = (0.5 - 0.3 * lean, 0.3, 0.2 + 0.3 * lean)
    return TokenReply("1", ({str(k): math.log(p) for k, p in enumerate(probs)},))


def test_validate_uses_the_test_split_and_prints_the_shipped_calibrated_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = ScriptedEngine(by_length)
    lm = engine.lm()
    config = AlignConfig(
        labels=SET, out=tmp_path / "cal", lm="scripted/judge", method="calibrate", B=100
    )
    res = calibrate_judge(config, lm=lm, echo=lambda s: None)
    test_ids = set(res.split.items["test"])
    # validate --judge DIR on the set it was fitted on: the test split only
    from attune_judge.cli import main

    monkeypatch.setattr("attune_judge.judges._factory.resolve_judge_lm", lambda m, **s: lm)
    argv = ["validate", "--set", SET, "--judge", res.out, "--lm", "scripted/judge"]
    argv += ["-o", str(tmp_path / "v1"), "--B", "100"]
    try:
        main(argv)
    except SystemExit as ex:
        assert not ex.code
    out = capsys.readouterr().out
    assert f"validating on its {len(test_ids)} held-out (test-split) items only" in out
    summary = json.loads((tmp_path / "v1" / "summary.json").read_text())
    assert summary["validation"]["n_items"] == len(test_ids)
    assert "calibrated" in json.dumps(summary["validation"]["judge_spec"])
    # a plain validate of the model: the shipped head's row beside the raw one
    shipped = tmp_path / "shipped"
    shutil.copytree(res.out, shipped / "heads" / SET)
    real: Any = __import__("attune_judge._resources", fromlist=["shipped_dir"]).shipped_dir

    def fake(name: str) -> Path:
        return shipped if name == "calibration" else real(name)

    monkeypatch.setattr("attune_judge.validate._calibrated.shipped_dir", fake)
    plain = build_judge(SET, lm, JudgeOptions(score_mode="expected", use_reference=False))
    result = validate_judge(
        SET, "scripted/judge", tmp_path / "v2", judge=plain, B=100, report_files=False
    )
    lines = "\n".join(result.summary)
    assert f"calibrated with the shipped head {SET}" in lines
    assert "baselines beside scripted/judge (calibrated)" in lines
    data = json.loads((tmp_path / "v2" / "summary.json").read_text())["calibrated"]
    n_cal = data["calibrated"]["dimensions"]["total"]["agreement"]["n"]
    assert n_cal == data["uncalibrated"]["dimensions"]["total"]["agreement"]["n"]
    assert n_cal <= len(test_ids) < result.n_items
    # the calibrated rows' Brier score is the head's distributions', not the raw ones'
    crit = "level_explorations"
    cal_p = data["calibrated"]["dimensions"][crit]["probability_scores"]
    raw_p = data["uncalibrated"]["dimensions"][crit]["probability_scores"]
    assert cal_p["n"] == raw_p["n"] and cal_p["brier"] != raw_p["brier"]
