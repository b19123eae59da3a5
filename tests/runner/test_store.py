from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.errors import UserError
from attune_judge.runner import RunDir

# private unit: the judgments store's torn-tail cut and redaction
from attune_judge.runner._progress import make_progress
from attune_judge.runner._store import cut_torn_tail, redact, secret_values


def test_secret_values_are_credential_like_variables_of_eight_or_more_characters() -> None:
    env = {
        "OPENAI_API_KEY": "sk-abcdefgh",
        "HF_TOKEN": "hf_12345678",
        "MY_KEY": "1",  # too short to redact safely
        "HOME": "/root/somewhere",  # not a credential name
    }
    assert sorted(secret_values(env)) == ["hf_12345678", "sk-abcdefgh"]
    assert redact("key=sk-abcdefgh; tok=hf_12345678", secret_values(env)) == "key=***; tok=***"


def test_cut_torn_tail_keeps_complete_lines_and_saves_the_fragment(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b"')
    assert cut_torn_tail(path) == '{"a": 3, "b"'
    assert path.read_text() == '{"a": 1}\n{"a": 2}\n'
    assert (tmp_path / "j.jsonl.torn").read_text() == '{"a": 3, "b"\n'
    # a complete last record without its newline only gets the newline
    path.write_text('{"a": 1}\n{"a": 2}')
    assert cut_torn_tail(path) is None
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


def test_progress_is_silent_when_quiet_or_shorter_than_its_interval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # under pytest stderr is not a terminal: quiet gives the silent counter, otherwise plain
    # lines at an interval (issue 29; tests/runner/test_progress_lines.py), none this short
    for quiet, kind in ((True, "Progress"), (False, "_LineProgress")):
        with make_progress(3, quiet=quiet) as bar:
            bar.advance()
            bar.advance(failed=True)
        assert type(bar).__name__ == kind
        assert (bar.done, bar.failed) == (2, 1)
    assert capsys.readouterr() == ("", "")  # nothing written at all
