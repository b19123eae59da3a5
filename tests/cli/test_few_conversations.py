"""Below MIN_CLUSTERS (10) conversations every command says so (issue 17): ``score``'s console
summary, ``rank RUN`` and the report. The shipped samples have 8 conversations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests.conftest import SAMPLES

WARNING = "only 8 conversations (clusters): intervals are unreliable below 10"


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert (stop.value.code or 0) == 0
    return capsys.readouterr().out


def test_score_rank_and_report_warn_below_ten_conversations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    out = _main(["score", str(SAMPLES), "--rubric", "lexical", "-o", str(run), "-B", "200"], capsys)
    assert f"warning: {WARNING}" in out
    board = json.loads((run / "summary.json").read_text("utf-8"))
    (judge,) = board["judges"].values()
    assert judge["leaderboard"]["rank_claims"] is False
    assert WARNING in (run / "report.md").read_text("utf-8")
    ranked = _main(["rank", str(run), "-B", "200"], capsys)
    assert f"> **Warning:** {WARNING}" in ranked and "No tiers" in ranked
