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


def test_calibrate_flags_few_conversations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from attune_judge.data import Rating, write_jsonl

    vals = {"A": [1, 2, 3, 4, 5, 3], "B": [1, 2, 3, 5, 5, 2], "J": [2, 2, 3, 4, 4, 3]}
    recs = {
        r: [
            Rating(item_id=f"i{k}", rater=r, dimension="d", value=v, cluster=f"c{k // 2}")
            for k, v in enumerate(vs)
        ]
        for r, vs in vals.items()
    }
    write_jsonl(tmp_path / "h.jsonl", recs["A"] + recs["B"])
    write_jsonl(tmp_path / "j.jsonl", recs["J"])
    args = ["--human", str(tmp_path / "h.jsonl"), "--judge", str(tmp_path / "j.jsonl")]
    out = _main(["calibrate", *args, "-B", "200"], capsys)
    assert "- flag: only 3 conversations (clusters): intervals are unreliable below 10" in out
