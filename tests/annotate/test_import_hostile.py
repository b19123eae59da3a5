"""``annotate import`` of hostile Label Studio files (issue 44, point 2): each one is refused
in one line (exit 2) with nothing stored, or imported exactly; never a traceback, never a
value changed on the way (3.9 stored as 3, ``true`` as 1, ``"٤"`` as 4, ``bob,alice`` as
``bob``), never a label under an existing web annotator's name without ``--as``.

The valid file is ``annotate export --format labelstudio`` of a database with two annotators;
each case changes one thing in it.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from attune_judge.annotate import export_labels, prepare
from attune_judge.cli import main
from tests.annotate._fixtures import make_items, make_rubric

Tasks = list[Any]


def _store(root: Path, annotators: list[str]) -> Path:
    root.mkdir(exist_ok=True)
    store, _ = prepare(
        root / "l.sqlite",
        make_items(root),
        task="ratings",
        rubric=str(make_rubric(root)),
        k=2,
        annotators=annotators,
    )
    items = [i.item_id for i in store.items()]
    for who, (w, f) in (("alice", (2, 3)), ("bob", (4, 5))):
        for item in items if who in annotators else ():
            assert store.record(who, item, "label", {"warmth": w, "fit": f})
    store.close()
    return root / "l.sqlite"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Tasks:
    root = tmp_path_factory.mktemp("src")
    db = _store(root, ["alice", "bob"])
    export_labels(db, root / "ls.json", "labelstudio")
    tasks: Tasks = json.loads((root / "ls.json").read_text("utf-8"))
    assert len(tasks) == 6 and all(len(t["annotations"]) == 2 for t in tasks)
    return tasks


def _set(path: str, value: Any) -> Callable[[Tasks], Any]:
    """Set ``tasks[0]...`` at a dotted path (``annotations.0.result.0.value.choices``)."""

    def change(tasks: Tasks) -> Tasks:
        node: Any = tasks[0]
        *head, last = path.split(".")
        for part in head:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        return tasks

    return change


def _delete(path: str) -> Callable[[Tasks], Any]:
    def change(tasks: Tasks) -> Tasks:
        node: Any = tasks[0]
        *head, last = path.split(".")
        for part in head:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]
        return tasks

    return change


def _last_task_bad(tasks: Tasks) -> Tasks:  # an earlier task's labels must not be kept
    tasks[-1]["annotations"][0]["result"][0]["value"]["choices"] = ["9"]
    return tasks


def _twice_differently(tasks: Tasks) -> Tasks:
    again = copy.deepcopy(tasks[0])
    again["annotations"][0]["result"][0]["value"]["choices"] = ["1"]
    return [*tasks, again]


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


CHOICE = "annotations.0.result.0.value.choices"
REFUSED: dict[str, tuple[Callable[[Tasks], Any] | str, str]] = {
    "not JSON": ("[{", "not valid JSON"),
    "truncated JSON": ("__TRUNCATED__", "not valid JSON"),
    "empty file": ("", "not valid JSON"),
    "top level an object": (lambda t: {"tasks": t}, "expected a JSON list"),
    "top level a number": ("42", "expected a JSON list"),
    "deeply nested": (_nested(100_000), "nested too deeply"),
    "10,000-digit integer": ("[" + "9" * 10_000 + "]", "not valid JSON"),
    "task not an object": (lambda t: [*t, "task"], "task 6: expected a Label Studio task"),
    "missing data": (_delete("data"), "field data.item_id"),
    "item_id a number": (_set("data.item_id", 7), "field data.item_id"),
    "unknown item": (_set("data.item_id", "nope"), "field data.item_id"),
    "annotations not a list": (_set("annotations", {"a": 1}), "field annotations"),
    "annotation not an object": (_set("annotations.0", [1]), "expected an annotation"),
    "result missing": (_delete("annotations.0.result"), "field result"),
    "result nested garbage": (_set("annotations.0.result.0", [[{}]]), "field result[0]"),
    "choices not a list": (_set(CHOICE, "3"), "field result[0]"),
    "two choices": (_set(CHOICE, ["3", "4"]), "field result[0]"),
    "fraction 3.9": (_set(CHOICE, ["3.9"]), "is not a level"),
    "number 3.9": (_set(CHOICE, [3.9]), "field result[0]"),
    "true": (_set(CHOICE, [True]), "field result[0]"),
    "Arabic-Indic four": (_set(CHOICE, ["٤"]), "is not a level"),
    "huge level": (_set(CHOICE, ["9" * 5000]), "is not a level"),
    "out of the scale": (_set(CHOICE, ["9"]), "field answers"),
    "criterion twice": (
        lambda t: [
            {
                **t[0],
                "annotations": [
                    {**t[0]["annotations"][0], "result": [t[0]["annotations"][0]["result"][0]] * 2}
                ],
            },
        ],
        "answered twice",
    ),
    "two annotators in one name": (
        _set("annotations.0.created_username", "bob,alice"),
        "not an annotator name",
    ),
    "name a number": (_set("annotations.0.created_username", 5), "not an annotator name"),
    "name with a newline": (
        _set("annotations.0.created_username", "eve\nmallory"),
        "not an annotator name",
    ),
    "name too long": (_set("annotations.0.created_username", "x" * 65), "not an annotator name"),
    "no annotator": (
        lambda t: _delete("annotations.0.completed_by")(
            _delete("annotations.0.created_username")(t)
        ),
        "field completed_by",
    ),
    "cancelled as a string": (_set("annotations.0.was_cancelled", "false"), "was_cancelled"),
    "cancelled as a number": (_set("annotations.0.was_cancelled", 0), "was_cancelled"),
    "a later task fails": (_last_task_bad, "task 5 annotation 0"),
    "same label twice, differently": (_twice_differently, "twice in this file"),
}


def _write(tmp_path: Path, exported: Tasks, change: Callable[[Tasks], Any] | str) -> Path:
    path = tmp_path / "in.json"
    if isinstance(change, str):
        text = json.dumps(exported)[:200] if change == "__TRUNCATED__" else change
        path.write_text(text, "utf-8")
    else:
        path.write_text(json.dumps(change(copy.deepcopy(exported))), "utf-8")
    return path


def _labels(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as con:
        return con.execute("SELECT annotator, item_id, answers FROM labels ORDER BY seq").fetchall()


def _import(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(["annotate", "import", *argv])
    printed = capsys.readouterr()
    return int(stop.value.code or 0), printed.err


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_hostile_file_is_refused_in_one_line_with_nothing_stored(
    case: str, tmp_path: Path, exported: Tasks, capsys: pytest.CaptureFixture[str]
) -> None:
    change, message = REFUSED[case]
    db = _store(tmp_path / "to", ["someone"])
    before = _labels(db)
    code, err = _import([str(_write(tmp_path, exported, change)), "--db", str(db)], capsys)
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert message in err and "in.json" in err, err
    assert _labels(db) == before


def test_a_valid_file_is_imported_exactly_cancelled_ones_skipped(
    tmp_path: Path, exported: Tasks, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = copy.deepcopy(exported)
    tasks[0]["annotations"][0]["was_cancelled"] = True  # a real boolean: skipped
    tasks[1]["annotations"][1]["was_cancelled"] = False
    path = tmp_path / "in.json"
    path.write_text(json.dumps(tasks), "utf-8")
    root = tmp_path / "to"
    root.mkdir()
    store, _ = prepare(
        root / "l.sqlite",
        make_items(root),
        task="ratings",
        rubric=str(make_rubric(root)),
        k=2,
        annotators=["someone"],
    )
    store.close()
    db = root / "l.sqlite"
    assert _import([str(path), "--db", str(db)], capsys)[0] == 0
    got = {(w, i, json.loads(a)["warmth"], json.loads(a)["fit"]) for w, i, a in _labels(db)}
    expected = {
        (who, t["data"]["item_id"], *levels)
        for t in tasks
        for who, levels in (("alice", (2, 3)), ("bob", (4, 5)))
    }
    cancelled = next(
        (a["created_username"], tasks[0]["data"]["item_id"]) for a in tasks[0]["annotations"][:1]
    )
    assert got == {e for e in expected if e[:2] != cancelled} and len(got) == 11
    # again: everything already there, nothing changed
    assert _import([str(path), "--db", str(db)], capsys)[0] == 0
    assert len(_labels(db)) == 11


def test_a_web_annotators_name_needs_as(
    tmp_path: Path, exported: Tasks, capsys: pytest.CaptureFixture[str]
) -> None:
    one = copy.deepcopy(exported)
    for t in one:
        t["annotations"] = [a for a in t["annotations"] if a["created_username"] == "bob"]
    path = tmp_path / "in.json"
    path.write_text(json.dumps(one), "utf-8")
    db = _store(tmp_path / "to", ["bob"])  # bob labels on the web there (4, 5 everywhere)
    before = _labels(db)
    code, err = _import([str(path), "--db", str(db)], capsys)
    assert code == 2 and "'bob' already labels" in err and "--as NAME" in err, err
    assert _labels(db) == before
    assert _import([str(path), "--db", str(db), "--as", "bob-ls"], capsys)[0] == 0
    assert {w for w, _, _ in _labels(db)} == {"bob", "bob-ls"}
    code, err = _import([str(tmp_path / "both.json"), "--db", str(db), "--as", "x"], capsys)
    assert code == 2
    (tmp_path / "both.json").write_text(json.dumps(exported), "utf-8")
    code, err = _import([str(tmp_path / "both.json"), "--db", str(db), "--as", "x"], capsys)
    assert code == 2 and "file of one annotator" in err, err
