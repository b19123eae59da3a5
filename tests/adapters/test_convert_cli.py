"""``data convert`` (registered by the adapters package on a ``data`` group)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from attune_judge.cli import app
from attune_judge.data import JudgeItem, Preference, Rating, read_jsonl
from tests.conftest import DATASETS


def _app() -> typer.Typer:
    return app  # the real command line: ``attune-judge data convert``


def test_convert_writes_all_files(tmp_path: Path) -> None:
    out = tmp_path / "ec"
    src = str(DATASETS / "empathic-communication")
    res = CliRunner().invoke(
        _app(), ["data", "convert", "empathic-communication", src, "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    # 7 raters x 50 conversations x 21 dimensions + 300 seeker ratings; 3 x 50 public texts
    assert "7650 ratings, 0 preferences, 150 items" in res.output
    assert len(read_jsonl(out / "ratings.jsonl", Rating)) == 7650
    assert read_jsonl(out / "preferences.jsonl", Preference) == []
    assert len(read_jsonl(out / "items.jsonl", JudgeItem)) == 150
    report = json.loads((out / "report.json").read_text())
    assert report["dataset"] == "empathic-communication"
    assert report["counts"]["combined_values_checked"] == 7350


def test_convert_duo_lists_unmatched(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        _app(), ["data", "convert", "duo", str(DATASETS / "duo"), "-o", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    # the fixture's 24 English dialogues, 12 of them with observer ratings (full data: 107)
    assert "en: dialogues without observer ratings: 12" in res.output


def test_unknown_dataset_is_rejected(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        _app(), ["data", "convert", "nope", str(tmp_path), "-o", str(tmp_path)]
    )
    # a usage error (exit 2) naming the bad value, not any crash (which would also be != 0)
    assert res.exit_code == 2, res.output
    assert "'nope' is not one of" in res.output


def test_convert_esconv_conversation_items(tmp_path: Path) -> None:
    src = str(DATASETS / "esconv")
    args = ["data", "convert", "esconv", src, "-o", str(tmp_path), "--item-level", "conversation"]
    res = CliRunner().invoke(_app(), args)
    assert res.exit_code == 0, res.output
    # 10 FADO + 11 FailedESConv conversations in the fixture (full data 1,300 + 196)
    assert "21 items" in res.output


def test_convert_bad_item_level(tmp_path: Path) -> None:
    from attune_judge.data.adapters import convert
    from attune_judge.errors import UserError

    with pytest.raises(UserError, match="item-level"):
        convert("esconv", DATASETS / "esconv", tmp_path, item_level="turn")
