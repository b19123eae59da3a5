"""build_judge picks the program by rubric kind; the ``judge`` command prints one Judgment."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import JudgeItem, Judgment
from attune_judge.errors import UserError
from attune_judge.judges import (
    BehaviourJudge,
    JudgeOptions,
    LengthJudge,
    LexicalJudge,
    PairwiseJudge,
    ReferenceJudge,
    build_judge,
    build_jury,
)
from attune_judge.testing import ScriptedEngine


def test_kind_selects_the_program() -> None:
    lm = ScriptedEngine(lambda m: "{}").lm()
    assert isinstance(build_judge("attunebench-reference", lm), ReferenceJudge)
    assert isinstance(build_judge("attune-empathy-anchored", lm), ReferenceJudge)
    assert isinstance(build_judge("attunebench-pairwise", lm), PairwiseJudge)
    assert isinstance(build_judge("attunebench-behaviours", lm), BehaviourJudge)
    assert isinstance(build_judge("length"), LengthJudge)
    assert isinstance(build_judge("lexical"), LexicalJudge)
    with pytest.raises(ValueError, match="use_reference"):
        build_judge("attunebench-pairwise", lm, JudgeOptions(use_reference=False))


def test_model_string_errors_surface_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(UserError, match="GEMINI_API_KEY"):
        build_judge("attunebench-reference", "gemini/gemini-2.5-flash")


def test_jury_of_models(monkeypatch: pytest.MonkeyPatch) -> None:
    a = ScriptedEngine(lambda m: "{}").lm("scripted/a")
    b = ScriptedEngine(lambda m: "{}").lm("scripted/b")
    jury = build_jury("attunebench-reference", [a, b], method="median")
    assert [m.spec.model_name() for m in jury.members] == ["scripted/a", "scripted/b"]


def _item_file(tmp_path: Path, item: JudgeItem) -> Path:
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    return path


def test_cli_prints_one_judgment(
    tmp_path: Path, item: JudgeItem, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _item_file(tmp_path, item)
    with pytest.raises(SystemExit) as done:
        main(["judge", str(path), "--rubric", "length"])
    assert done.value.code == 0
    judgment = Judgment.model_validate_json(capsys.readouterr().out)
    assert judgment.item_id == item.item_id and judgment.overall == 6.0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--rubric", "no-such-rubric"], "attunebench-reference"),
        (["--lm", "openai/gpt-4.1-mini"], "OPENAI_API_KEY"),
        (["--lm", "openai/x", "--api-base", "http://127.0.0.1:9/v1"], "http://127.0.0.1:9/v1"),
    ],
)
def test_cli_user_errors_exit_two(
    tmp_path: Path,
    item: JudgeItem,
    args: list[str],
    expected: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _item_file(tmp_path, item)
    with pytest.raises(SystemExit) as done:
        main(["judge", str(path), *args])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expected in err


def test_cli_bad_item_file_names_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "item.json"
    path.write_text(
        json.dumps({"item_id": "x", "conversation_id": "c", "context": [], "candidate": "hi"}),
        "utf-8",
    )
    with pytest.raises(SystemExit) as done:
        main(["judge", str(path), "--rubric", "length"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert str(path) in err and "candidate_model" in err


def test_every_judge_follows_the_protocols() -> None:
    from attune_judge.judges import Judge, Jury

    lm = ScriptedEngine(lambda m: "{}").lm()
    judges = [
        build_judge(name, lm)
        for name in ("attunebench-reference", "attunebench-pairwise", "attunebench-behaviours")
    ]
    judges += [build_judge("length"), build_judge("lexical"), Jury(judges[:1])]
    for judge in judges:
        # every judge can also be awaited (the async runner's protocol)
        assert isinstance(judge, Judge) and inspect.iscoroutinefunction(judge.ajudge)
        json.dumps(judge.spec.model_dump(mode="json"))  # JSON-serialisable
