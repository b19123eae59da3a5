"""``attune-judge data ...`` end to end: exit codes 0 / 2, counts, problems, written records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from attune_judge.cli import app
from attune_judge.data import JudgeItem, Preference, Rating, load_attunebench, read_jsonl
from tests.conftest import REPO_ROOT, SAMPLES

BAD = REPO_ROOT / "tests" / "data" / "bad"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "attune_judge", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "120"},
    )


def test_validate_samples_prints_the_counts_table() -> None:
    out = _run("data", "validate", SAMPLES)
    assert out.returncode == 0, out.stderr
    rows = {}
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 2 and cells[1].isdigit():
            rows[cells[0]] = int(cells[1])
    # hand tally: see tests/data/test_attunebench_samples.py
    assert rows["conversations"] == 8
    assert rows["turns"] == 22
    assert rows["turns with a reference (human-edited)"] == 19
    assert rows["pairwise comparisons"] == 30
    assert rows["pairwise general"] == 16
    assert rows["pairwise custom"] == 2
    assert rows["behaviour answers (item x turn)"] == 35
    assert rows["emotion tags"] == 28


def _invoke(*args: str | Path) -> str:
    """In-process run (no UserError expected); returns stdout."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_validate_json_output() -> None:
    summary = json.loads(_invoke("data", "validate", SAMPLES, "--json"))
    assert (summary["conversations"], summary["turns"], summary["pairwise_comparisons"]) == (
        8,
        22,
        30,
    )


def test_validate_bad_folder_exits_two_listing_every_problem() -> None:
    out = _run("data", "validate", BAD / "mixed")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert lines[0] == f"error: {BAD / 'mixed'}: 3 problem(s) in 2 of 3 file(s); nothing was loaded"
    assert lines[1].startswith(f"  {BAD / 'mixed' / 'conversation_2.json'}: line 7, column 7: ")
    assert "conversation_3.json: $.turns[0].moodShiftTags[0].emotion: emotion 'Sad'" in lines[2]
    assert "conversation_3.json: $.turns[0].moodShiftTags[0].intensity: " in lines[3]
    assert len(lines) == 4


def test_validate_empty_folder_exits_two(tmp_path: Path) -> None:
    out = _run("data", "validate", tmp_path)
    assert out.returncode == 2
    assert "no conversation files" in out.stderr and "Traceback" not in out.stderr


def test_exports_write_records(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    out = _invoke("data", "items", SAMPLES, "-o", items, "--candidate", "llm_improved")
    assert out.strip() == f"19 judge items (llm_improved) -> {items}"
    records = read_jsonl(items, JudgeItem)
    assert records[0].item_id == "synthetic-5:1:llm_improved"

    prefs = tmp_path / "prefs.jsonl"
    _invoke("data", "preferences", SAMPLES, "-o", prefs)
    assert len(read_jsonl(prefs, Preference)) == 30

    ratings = tmp_path / "ratings.jsonl"
    _invoke("data", "ratings", SAMPLES, "-o", ratings, "--llm-value")
    assert len(read_jsonl(ratings, Rating)) == 105  # 35 judgements x 3 answers

    convs = tmp_path / "convs.jsonl"
    _invoke("data", "dump", SAMPLES, "-o", convs)
    assert load_attunebench(convs) == load_attunebench(SAMPLES)


def test_items_with_bad_candidate_exits_two(tmp_path: Path) -> None:
    out = _run("data", "items", SAMPLES, "-o", tmp_path / "x.jsonl", "--candidate", "nobody")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
