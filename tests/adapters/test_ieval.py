"""iEval adapter on the real file."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from attune_judge.data.adapters import AdapterResult, convert_ieval, parse_ieval_chat_log
from tests.conftest import DATASETS

SRC = DATASETS / "ieval"
pytestmark = pytest.mark.skipif(not SRC.is_dir(), reason="shared datasets not present")
BOTS = ("Pink", "Purple", "Yellow", "Green")


@pytest.fixture(scope="module")
def result() -> AdapterResult:
    return convert_ieval(SRC)


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    return json.loads((SRC / "ieval_data.json").read_text("utf-8"))


def test_counts(result: AdapterResult, raw: list[dict]) -> None:
    # 240 tasks x 2 valences x 4 bots = 1920 conversations; 10 scores each; 6 bot pairs per
    # scenario. Ties counted independently from the raw "Rating" fields.
    assert len(raw) == 240
    assert len(result.items) == 1920
    assert len(result.ratings) == 19200
    assert len(result.preferences) == 240 * 2 * 6
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


def test_ratings_values(result: AdapterResult) -> None:
    v = {(r.item_id, r.dimension): r for r in result.ratings}
    # task 0 positive Pink: P 3, ^P 1, A 4, EU 3, Rating 1
    assert v[("ieval:0:positive:Pink", "P")].value == 3.0
    assert v[("ieval:0:positive:Pink", "^P")].value == 1.0
    assert v[("ieval:0:positive:Pink", "EU")].value == 3.0
    assert v[("ieval:0:positive:Pink", "Rating")].value == 1.0
    assert result.report is not None
    likert = {d: r for d, r in result.report.value_ranges.items() if d != "Rating"}
    assert len(likert) == 9
    for rng in likert.values():
        assert rng["min"] == 1.0 and rng["max"] == 5.0
    assert result.report.value_ranges["Rating"]["max"] == 3.0


def test_chat_log_quirks() -> None:
    # a line without "- " continues the previous message; _x000D_ escapes are removed
    log = "- hi there\n- hello ! how are you ?\n- bad day.\nUGH_x000D_\n- oh no"
    msgs = parse_ieval_chat_log(log)
    assert [m.role for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[2].content == "bad day.\nUGH"


def test_items_alternate(result: AdapterResult) -> None:
    for item in result.items:
        roles = [m.role for m in item.context]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
        assert "_x000D_" not in item.candidate + "".join(m.content for m in item.context)
    # the one 7-line log (a continuation line) still gives 6 messages
    assert Counter(len(i.context) for i in result.items) == {5: 1920}
