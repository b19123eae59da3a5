"""``attune-judge bench``: user errors are one-line messages with exit code 2."""

from __future__ import annotations

import pytest

from attune_judge.cli import main
from attune_judge.errors import UserError
from attune_judge.lm import parse_model_spec
from tests.conftest import SAMPLES


def test_unknown_task_is_a_user_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", str(SAMPLES), "-m", "local", "-o", str(tmp_path / "r"), "--tasks", "vibes"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--tasks: unknown task(s) 'vibes'" in err and "drafting" in err


def test_bad_model_setting_is_a_user_error(tmp_path, capsys):
    args = ["bench", str(SAMPLES), "-m", "local@temp=2", "-o", str(tmp_path / "r")]
    with pytest.raises(SystemExit) as exc:
        main([*args, "--tasks", "emotion"])
    assert exc.value.code == 2
    assert "bad setting 'temp=2'" in capsys.readouterr().err


def test_model_spec_parsing():
    assert parse_model_spec("openai/gpt-4.1-mini") == ("openai/gpt-4.1-mini", {})
    assert parse_model_spec("local@temperature=0.5, seed=2") == (
        "local",
        {"temperature": 0.5, "seed": 2},
    )
    with pytest.raises(UserError, match="not valid"):
        parse_model_spec("local@seed=x")
