"""Loading folders, files and JSON Lines; every problem of every file reported together."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from attune_judge.data import load_attunebench, write_attunebench_jsonl
from attune_judge.errors import UserError
from tests.conftest import SAMPLES
from tests.data._factory import conversation

BAD = Path(__file__).parent / "bad"


def _error(path: Path) -> UserError:
    with pytest.raises(UserError) as info:
        load_attunebench(path)
    return info.value


def test_malformed_json_names_file_line_and_column() -> None:
    err = _error(BAD / "malformed.json")
    # the comma is missing at the end of line 6; the parser stops at line 7, column 7
    assert err.problems == [
        f"{BAD / 'malformed.json'}: line 7, column 7: not valid JSON: Expecting ',' delimiter"
    ]
    assert "1 problem(s) in 1 of 1 file(s); nothing was loaded" in err.message


def test_wrong_types_file_lists_every_field() -> None:
    err = _error(BAD / "wrong_types.json")
    where = str(BAD / "wrong_types.json")
    assert err.problems == [
        f"{where}: $.turns[0].turnNumber: Input should be a valid integer, unable to parse "
        "string as an integer (got 'one')",
        f"{where}: $.turns[0].userMessage: Input should be a valid string (got 42)",
        f"{where}: $.turns[0].moodShiftTags: Input should be a valid list "
        "(got {'emotion': 'Upset'})",
        f"{where}: $.turns[0].annotations.binaryJudgements[0].observedBehavior: behaviour "
        "answer must be 'yes', 'no', 'na' or null, got True",
    ]


@pytest.mark.parametrize(
    ("name", "path", "message"),
    [
        (
            "bad_emotion.json",
            "$.turns[0].moodShiftTags[0].emotion",
            "emotion 'Sad' is not a PANAS-SF item; allowed: Proud, Irritable, Alert, Ashamed, "
            "Inspired, Nervous, Determined, Attentive, Jittery, Active, Distressed, Afraid, "
            "Excited, Upset, Strong, Guilty, Scared, Hostile, Enthusiastic, Interested",
        ),
        (
            "bad_intensity.json",
            "$.turns[0].moodShiftTags[0].intensity",
            "intensity 9 is out of range 1-7",
        ),
        (
            "bad_label.json",
            "$.turns[0].annotations.pairwiseComparisons[0].responseB",
            "pairwise label 'human' resolves to no response: this turn has no "
            "humanEdited/alternate2 in alternateResponses",
        ),
        (
            "duplicate_turns.json",
            "$.turns[1].turnNumber",
            "duplicate turn number 1 (also at turns[0])",
        ),
    ],
)
def test_bad_file_gives_one_precise_problem(name: str, path: str, message: str) -> None:
    err = _error(BAD / name)
    assert err.problems == [f"{BAD / name}: {path}: {message}"]


def test_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a conversation")
    err = _error(tmp_path)
    assert err.message == (
        f"{tmp_path}: no conversation files (*.json or *.jsonl) in this folder; "
        "point at the folder holding conversation_N.json"
    )


def test_folder_of_subsets_names_the_subfolders(tmp_path: Path) -> None:
    for name in ("Sample200", "Subsample100"):
        (tmp_path / name).mkdir()
        shutil.copy(SAMPLES / "conversation_5.json", tmp_path / name / "conversation_5.json")
    assert _error(tmp_path).message.endswith(
        "point at the folder holding conversation_N.json "
        "(subfolders with .json files: Sample200, Subsample100)"
    )


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    assert _error(tmp_path / "nope").message == f"{tmp_path / 'nope'}: no such file or folder"


def test_mixed_folder_reports_every_problem_and_loads_nothing() -> None:
    err = _error(BAD / "mixed")
    mixed = BAD / "mixed"
    assert err.message == f"{mixed}: 3 problem(s) in 2 of 3 file(s); nothing was loaded"
    assert [p.split(": ")[0] for p in err.problems] == [
        str(mixed / "conversation_2.json"),
        str(mixed / "conversation_3.json"),
        str(mixed / "conversation_3.json"),
    ]
    assert "not valid JSON" in err.problems[0]
    assert "emotion 'Sad'" in err.problems[1]
    assert "got 'extreme'" in err.problems[2]
    assert "conversation_1.json" not in str(err)  # the good file has no problem


def test_folder_reads_files_in_natural_order() -> None:
    ids = [c.conversation_id for c in load_attunebench(SAMPLES)]
    assert ids == [f"synthetic-{n}" for n in (5, 12, 17, 23, 31, 48, 102, 248)]


def test_single_file_and_list_file(tmp_path: Path) -> None:
    one = load_attunebench(SAMPLES / "conversation_17.json")
    assert [c.conversation_id for c in one] == ["synthetic-17"]
    listed = tmp_path / "two.json"
    listed.write_text(json.dumps([conversation(1, "a"), conversation(2, "b")]))
    assert [len(c.turns) for c in load_attunebench(listed)] == [1, 2]


def test_jsonl_round_trip_and_line_numbers(tmp_path: Path) -> None:
    convs = load_attunebench(SAMPLES)
    out = tmp_path / "convs.jsonl"
    assert write_attunebench_jsonl(out, convs) == 8
    assert load_attunebench(out) == convs
    lines = out.read_text().splitlines()
    lines[2] = lines[2].replace('"emotion": "Upset"', '"emotion": "Sad"', 1)
    lines[4] = lines[4][:-1]
    out.write_text("\n".join(lines) + "\n")
    err = _error(out)
    assert err.problems[0].startswith(f"{out}:3: $.turns[1].moodShiftTags[0].emotion: ")
    assert "emotion 'Sad' is not a PANAS-SF item" in err.problems[0]
    assert err.problems[1].startswith(f"{out}:5: column ")
    assert "not valid JSON" in err.problems[1]


def test_duplicate_conversation_ids_across_files(tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "conversation_5.json", tmp_path / "conversation_5.json")
    shutil.copy(SAMPLES / "conversation_5.json", tmp_path / "conversation_6.json")
    err = _error(tmp_path)
    assert err.problems == [
        f"{tmp_path / 'conversation_6.json'}: $.conversationId: conversation id 'synthetic-5' "
        f"is also used in {tmp_path / 'conversation_5.json'}"
    ]
