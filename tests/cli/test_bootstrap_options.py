"""One bootstrap vocabulary: ``--bootstrap``/``-B``/``--B`` and ``--ci`` reach the run records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests.conftest import SAMPLES


def _score(tmp: Path, name: str, *extra: str) -> dict:
    out = tmp / name
    with pytest.raises(SystemExit) as stop:
        main(["score", str(SAMPLES), "--rubric", "lexical", "-o", str(out), "-q", *extra])
    assert (stop.value.code or 0) == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    (judge,) = summary["judges"].values()
    return judge


def test_score_ci_and_bootstrap_reach_summary_and_report(tmp_path: Path) -> None:
    wide = _score(tmp_path, "r95", "--bootstrap", "200")
    narrow = _score(tmp_path, "r80", "-B", "200", "--ci", "0.8")
    for model in ("original", "llm_improved"):
        w, n = wide["models"][model]["score"], narrow["models"][model]["score"]
        assert (w["level"], w["B"]) == (0.95, 200)
        assert (n["level"], n["B"]) == (0.8, 200)
        assert n["mean"] == pytest.approx(w["mean"])
        # same draws, lower level: strictly inside the 95% interval
        assert w["lower"] < n["lower"] < n["upper"] < w["upper"]
    assert narrow["leaderboard"]["level"] == 0.8
    report = (tmp_path / "r80" / "report.md").read_text("utf-8")
    assert "80% interval" in report and "95% interval" not in report


@pytest.mark.parametrize("command", ["score", "calibrate", "bench", "validate", "demo", "align"])
def test_every_command_takes_the_same_bootstrap_option(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "--bootstrap" in text and "-B" in text
