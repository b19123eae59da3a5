"""Conflicting duplicate human labels (issue 42 point 4): one rule in every command that reads
human labels — a rater's label of an item counts once; two different labels of one rater for
one item are refused, naming the file and both lines (exit 2, no traceback).

Before, ``calibrate`` refused them on ratings only, ``rank --human`` averaged them, preference
and behaviour agreement and ``align`` counted both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from attune_judge import calibration as cal
from attune_judge.data import ChatMessage, JudgeItem, Judgment, Preference, Rating, write_jsonl
from tests._cli import run_cli


def _items(n: int = 24) -> list[str]:
    return [f"c{k // 2}:{k % 2}" for k in range(n)]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _ratings(tmp: Path, conflict: bool, value: Callable[[int], object] = lambda k: 1 + k % 5):
    """24 items of 12 conversations rated by ``p``; the last line rates item c0:0 again."""
    rows: list[dict[str, object]] = [
        {"item_id": i, "rater": "p", "value": value(k), "cluster": i.split(":")[0]}
        for k, i in enumerate(_items())
    ]
    again = value(1) if conflict else value(0)
    rows.append({"item_id": "c0:0", "rater": "p", "value": again, "cluster": "c0"})
    return _write(tmp / "human.jsonl", rows)


def _calibrate_ratings(tmp: Path, conflict: bool) -> list[str]:
    human = _ratings(tmp, conflict)
    judge = _write(
        tmp / "judge.jsonl",
        [
            {"item_id": i, "rater": "judge", "value": 1 + (k + 1) % 5, "cluster": i[:2]}
            for k, i in enumerate(_items())
        ],
    )
    return ["calibrate", "--human", str(human), "--judge", str(judge), "-B", "60"]


def _calibrate_behaviour(tmp: Path, conflict: bool) -> list[str]:
    rows: list[dict[str, object]] = [
        {
            "item_id": i,
            "rater": "participant",
            "dimension": "B1:observed",
            "value": "yes" if k % 3 else "no",
            "cluster": i.split(":")[0],
        }
        for k, i in enumerate(_items())
    ]
    rows.append({**rows[0], "value": "yes" if conflict else "no"})
    human = _write(tmp / "behaviour.jsonl", rows)
    judgments = [
        Judgment(
            item_id=i,
            judge_id="B",
            conversation_id=i.split(":")[0],
            candidate_model="original",
            overall=1.0,
            normalized=1.0,
            scores={"B1:observed": 1.0 if k % 2 else 0.0},
        )
        for k, i in enumerate(_items())
    ]
    write_jsonl(tmp / "judgments.jsonl", judgments)
    return ["calibrate", "--human", str(human), "--judge", str(tmp / "judgments.jsonl"), "-B", "60"]


def _prefs(tmp: Path, conflict: bool) -> Path:
    rows: list[dict[str, object]] = [
        {
            "item_id": i,
            "option_a": "x",
            "option_b": "y",
            "winner": "A" if k % 3 else "B",
            "rater": "p",
            "cluster": i.split(":")[0],
        }
        for k, i in enumerate(_items())
    ]
    # the same comparison listed the other way round: B of (y, x) is x, as A of (x, y) was
    again = {**rows[1], "option_a": "y", "option_b": "x", "winner": "A" if conflict else "B"}
    rows.append(again)
    return _write(tmp / "prefs.jsonl", rows)


def _calibrate_preferences(tmp: Path, conflict: bool) -> list[str]:
    human = _prefs(tmp, conflict)
    judge = [
        Preference(item_id=i, option_a="x", option_b="y", winner="A", rater="judge", cluster=i[:2])
        for i in _items()
    ]
    write_jsonl(tmp / "judge_prefs.jsonl", judge)
    return ["calibrate", "--human", str(human), "--judge", str(tmp / "judge_prefs.jsonl")]


def _rank_human(tmp: Path, conflict: bool) -> list[str]:
    human = _ratings(tmp, conflict)
    run = tmp / "run"
    run.mkdir()
    write_jsonl(
        run / "judgments.jsonl",
        [
            Judgment(
                item_id=i,
                judge_id="J",
                conversation_id=i.split(":")[0],
                candidate_model=f"m{k % 2}",
                overall=1 + (k * 7) % 5,
                normalized=((k * 7) % 5) / 4,
            )
            for k, i in enumerate(_items())
        ],
    )
    return ["rank", str(run), "--human", str(human), "--human-scale", "1,5"]


def _align(tmp: Path, conflict: bool) -> list[str]:
    human = _ratings(tmp, conflict)
    items = [
        JudgeItem(
            item_id=i,
            conversation_id=i.split(":")[0],
            context=[ChatMessage(role="user", content="I lost my job.")],
            candidate="That sounds hard.",
            candidate_model="m",
        )
        for i in _items()
    ]
    write_jsonl(tmp / "items.jsonl", items)
    return ["align", str(human), "--items", str(tmp / "items.jsonl"), "-o", str(tmp / "aligned")]


def _pilot(tmp: Path, conflict: bool) -> list[str]:
    rows: list[dict[str, object]] = []
    for k, i in enumerate(_items()):
        for rater, shift in (("ann", 0), ("bob", k % 2)):
            v = 1 + (k + shift) % 5
            rows.append({"item_id": i, "rater": rater, "value": v, "cluster": i.split(":")[0]})
    rows.append({**rows[0], "value": rows[0]["value"] % 5 + 1 if conflict else rows[0]["value"]})
    _write(tmp / "pilot.jsonl", rows)
    return ["annotate", "sample", "--pilot", str(tmp / "pilot.jsonl")]


COMMANDS = {
    "calibrate ratings": _calibrate_ratings,
    "calibrate behaviours": _calibrate_behaviour,
    "calibrate preferences": _calibrate_preferences,
    "rank --human": _rank_human,
    "align": _align,
    "annotate sample --pilot": _pilot,
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_conflicting_duplicate_labels_are_refused_the_same_way(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = COMMANDS[command](tmp_path, True)
    code, out, err = run_cli(argv, capsys)
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    # one message, naming the file and the line of the second label (the last line), and
    # both lines
    found = re.search(
        r"\.jsonl:(\d+): rater '\w+' labelled item 'c0:[01]' \(\w+ '[\w:]+'\) twice with "
        r"different values: \S+ \(line (\d+)\) and \S+ \(line (\d+)\); keep one",
        err,
    )
    assert found is not None, err
    assert found[1] == found[3] and int(found[2]) < int(found[3]), err


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"align"}))
def test_an_exact_repeat_of_a_label_is_accepted(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same label twice (for preferences: the same choice with the options swapped) is one
    # label, not a conflict (align would go on to load a model: its reading is the same code)
    argv = COMMANDS[command](tmp_path, False)
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "twice with different values" not in out + err


def test_rank_human_counts_a_repeated_label_once(tmp_path: Path) -> None:
    # item i: rater p says 3 (twice, an exact repeat), rater q says 5; the item's human value is
    # the raters' mean (3 + 5) / 2 = 4, not the records' mean (3 + 3 + 5) / 3
    js = [Judgment(item_id="i", judge_id="J", candidate_model="m", overall=4.0, normalized=0.5)]
    rs = [
        Rating(item_id="i", rater="p", value=3),
        Rating(item_id="i", rater="p", value=3),
        Rating(item_id="i", rater="q", value=5),
    ]
    assert cal.ppi_columns(js, rs, field="overall").human == [4.0]
