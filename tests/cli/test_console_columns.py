"""The score command's per-model lines keep their columns under model names over 20 characters
(issue 46: they broke at 20)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import write_jsonl
from attune_judge.runner import load_judge_items
from tests.conftest import SAMPLES

LONG = "provider/an-unusually-long-candidate-model-name"


def _model_lines(tmp_path: Path, models: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    """``score --rubric length`` (no model needed) on two turns per candidate model: the
    printed line of each model."""
    turns = load_judge_items(SAMPLES / "conversation_5.json", models=["original"])[:2]
    items = [
        t.model_copy(update={"item_id": f"{t.item_id}:{m}", "candidate_model": m})
        for m in models
        for t in turns
    ]
    write_jsonl(tmp_path / "items.jsonl", items)
    argv = ["score", str(tmp_path / "items.jsonl"), "--rubric", "length"]
    with pytest.raises(SystemExit) as stop:
        main([*argv, "-o", str(tmp_path / "run"), "-q", "-B", "50"])
    out = capsys.readouterr().out
    assert (stop.value.code or 0) == 0, out
    lines = {m: [x for x in out.splitlines() if x.startswith(f"  {m} ")] for m in models}
    assert all(len(found) == 1 for found in lines.values()), out
    return {m: found[0] for m, found in lines.items()}


def _column(line: str) -> int:
    """Where the estimate (the first number after the name) starts."""
    match = re.search(r"\s{1,}(\d|—)", line[2:])
    assert match, line
    return 2 + match.end() - 1


def test_long_model_names_keep_the_columns_aligned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _model_lines(tmp_path, ["gpt-4o", LONG, "m"], capsys)
    starts = {_column(line) for line in lines.values()}
    assert len(starts) == 1, lines  # every estimate starts in the same column
    assert starts.pop() > len(f"  {LONG}")
    counts = {line.index("n_ok=") for line in lines.values()}
    assert len(counts) == 1, lines  # and so do the counts


def test_short_names_keep_the_20_wide_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _model_lines(tmp_path, ["a", "b"], capsys)
    assert {_column(line) for line in lines.values()} == {2 + 20 + 1}
