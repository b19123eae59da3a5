"""iEval adapter on real data (a sample of ``ieval_data.json`` in tests/fixtures)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.data.adapters import AdapterResult, convert_ieval
from attune_judge.errors import UserError
from tests.conftest import DATASETS

SRC = DATASETS / "ieval"
BOTS = ("Pink", "Purple", "Yellow", "Green")


@pytest.fixture(scope="module")
def result() -> AdapterResult:
    return convert_ieval(SRC)


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return json.loads((SRC / "ieval_data.json").read_text("utf-8"))


def test_counts(result: AdapterResult, raw: list[dict]) -> None:
    # tasks x 2 valences x 4 bots conversations (full data: 240 tasks, 1920 conversations);
    # 10 scores each; 6 bot pairs per scenario. Ties counted independently from the raw
    # "Rating" fields. The fixture holds 7 tasks.
    n = len(raw)
    assert n == 7
    assert len(result.items) == n * 2 * 4
    assert len(result.ratings) == n * 2 * 4 * 10
    assert len(result.preferences) == n * 2 * 6
    ties = sum(
        task[v][a]["Rating"] == task[v][b]["Rating"]
        for task in raw
        for v in ("positive", "negative")
        for a, b in itertools.combinations(BOTS, 2)
    )
    assert ties > 0
    assert Counter(p.winner for p in result.preferences)["tie"] == ties
    assert result.report is not None
    assert all(v == [] for v in result.report.unmatched.values())


def test_first_task_ranking(result: AdapterResult) -> None:
    # task 0, positive scenario: Rating Pink 1, Purple 3, Yellow 2, Green 1 (read by hand)
    w = {p.item_id: p.winner for p in result.preferences}
    assert w["ieval:0:positive:Pink-Purple"] == "B"
    assert w["ieval:0:positive:Purple-Yellow"] == "A"
    assert w["ieval:0:positive:Pink-Green"] == "tie"
    assert w["ieval:0:positive:Yellow-Green"] == "A"
    p = next(p for p in result.preferences if p.item_id == "ieval:0:positive:Pink-Purple")
    assert p.cluster == "ieval:0" and p.rater == "participant:0"
    assert p.text_a == "What was it for?"


def test_ratings_values(result: AdapterResult, raw: list[dict]) -> None:
    v = {(r.item_id, r.dimension): r for r in result.ratings}
    # task 0 positive Pink: P 3, ^P 1, A 4, EU 3, Rating 1
    assert v[("ieval:0:positive:Pink", "P")].value == 3.0
    assert v[("ieval:0:positive:Pink", "^P")].value == 1.0
    assert v[("ieval:0:positive:Pink", "EU")].value == 3.0
    assert v[("ieval:0:positive:Pink", "Rating")].value == 1.0
    assert result.report is not None
    likert = {d: r for d, r in result.report.value_ranges.items() if d != "Rating"}
    assert len(likert) == 9
    for dim, rng in likert.items():
        seen = [float(t[v][b][dim]) for t in raw for v in ("positive", "negative") for b in BOTS]
        assert (rng["min"], rng["max"]) == (min(seen), max(seen))
        assert 1.0 <= rng["min"] <= rng["max"] <= 5.0
    assert result.report.value_ranges["Rating"]["max"] == 3.0


def _one_log(tmp_path: Path, log: str) -> Path:
    """An ieval_data.json of one task whose positive scenario has one bot, Pink, with ``log``."""
    scores = dict.fromkeys(["P", "^P", "A", "^A", "EU", "ER", "L", "R", "S"], 3) | {"Rating": 1}
    task = {"part": 0, "positive": {"emotion": "joyful", "Pink": {"chat_log": log, **scores}}}
    path = tmp_path / "ieval_data.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    return path


def test_chat_log_quirks(tmp_path: Path) -> None:
    # a line without "- " continues the previous message; _x000D_ escapes are removed;
    # speakers alternate, participant first; the last bot message is the candidate
    log = "- hi there\n- hello ! how are you ?\n- bad day.\nUGH_x000D_\n- oh no"
    (item,) = convert_ieval(_one_log(tmp_path, log)).items
    assert [(m.role, m.content) for m in item.context] == [
        ("user", "hi there"),
        ("assistant", "hello ! how are you ?"),
        ("user", "bad day.\nUGH"),
    ]
    assert item.candidate == "oh no"
    with pytest.raises(UserError, match=r"\$\[0\]\.positive\.Pink\.chat_log: .*without '- '"):
        convert_ieval(_one_log(tmp_path, "hi there\n- hello"))


def test_items_alternate(result: AdapterResult, raw: list[dict]) -> None:
    for item in result.items:
        roles = [m.role for m in item.context]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
        assert "_x000D_" not in item.candidate + "".join(m.content for m in item.context)
    # the one 7-line log (task 234 of the full data, a continuation line) still gives 6 messages
    logs = [t[v][b]["chat_log"] for t in raw for v in ("positive", "negative") for b in BOTS]
    assert sum(len(log.strip().splitlines()) == 7 for log in logs) == 1
    assert Counter(len(i.context) for i in result.items) == {5: len(result.items)}
