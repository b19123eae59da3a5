from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.errors import UserError
from attune_judge.runner import RunDir


def test_cut_torn_tail_keeps_complete_lines_and_saves_the_fragment(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b"')
    assert RunDir(tmp_path).repair_torn_tail() == '{"a": 3, "b"'
    assert path.read_text() == '{"a": 1}\n{"a": 2}\n'
    assert (tmp_path / "judgments.jsonl.torn").read_text() == '{"a": 3, "b"\n'
    # a complete last record without its newline only gets the newline
    path.write_text('{"a": 1}\n{"a": 2}')
    assert RunDir(tmp_path).repair_torn_tail() is None
    assert path.read_text() == '{"a": 1}\n{"a": 2}\n'


def test_judgments_without_a_manifest_are_not_adopted(tmp_path: Path) -> None:
    from attune_judge.runs import RunManifest

    (tmp_path / "judgments.jsonl").write_text('{"item_id": "x", "judge_id": "y"}\n')
    manifest = RunManifest(
        command="score",
        arguments={},
        versions={},
        judges={},
        rubric_hashes={},
        data_fingerprint="x",
        inputs={},
        models=[],
        seed=0,
        n_tasks=0,
    )
    with pytest.raises(UserError, match=r"no manifest\.json"):
        RunDir(tmp_path).open_manifest(manifest)


def test_a_damaged_manifest_is_a_user_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"command": "score"}))
    with pytest.raises(UserError, match=r"manifest\.json"):
        RunDir(tmp_path).read_manifest()
