"""The shipped calibration sets and conversations: licences beside them, records valid,
ids joining ratings to items, dimensions matching the shipped rubrics."""

from __future__ import annotations

from collections import Counter

import pytest

from attune_judge.data import JudgeItem, Preference, Rating, read_jsonl
from attune_judge.rubrics import load_rubric
from tests.conftest import REPO_ROOT

SETS = ("empathic-communication", "duo", "ieval", "esconv")
CAL = REPO_ROOT / "calibration"
DATA = REPO_ROOT / "data"


@pytest.mark.parametrize("name", SETS)
def test_licence_and_provenance_beside_every_file(name: str) -> None:
    for folder in (CAL / name, DATA / name):
        files = {p.name for p in folder.iterdir()}
        assert "PROVENANCE.md" in files
        assert files & {"LICENSE", "LICENSE.txt"}, folder
    licence = next((CAL / name).glob("LICENSE*")).read_text()
    expected = {
        "empathic-communication": "MIT License",
        "duo": "Attribution-NonCommercial 4.0",
        "ieval": "Attribution 4.0 International",
        "esconv": "Attribution-NonCommercial 4.0",
    }[name]
    assert expected in licence


@pytest.mark.parametrize("name", SETS)
def test_ratings_join_items(name: str) -> None:
    ratings = read_jsonl(CAL / name / "ratings.jsonl", Rating)
    items = read_jsonl(DATA / name / "items.jsonl", JudgeItem)
    item_ids = {i.item_id for i in items}
    conversations = {i.conversation_id for i in items}
    rated = {r.item_id for r in ratings}
    unjoined = {
        i
        for i in rated - item_ids
        if i.rsplit(":", 1)[0] not in conversations  # message ids
    }
    if name == "empathic-communication":
        # Perceived Empathy texts are not public: its 50 conversations have ratings only
        assert {i.split(":")[0] for i in unjoined} == {"perceived_empathy"}
        assert len(unjoined) == 50
    else:
        assert unjoined == set()


def test_sizes_stay_small() -> None:
    total = sum(p.stat().st_size for d in (CAL, DATA) for p in d.rglob("*") if p.is_file())
    # budget: the calibration sets and samples (~4.4 MB) plus five calibration heads of the
    # embedded judge (~1.2 MB: their judgments, proofs and held-out summaries)
    assert total < 7_000_000


def test_empathic_dimensions_match_rubrics() -> None:
    ratings = read_jsonl(CAL / "empathic-communication" / "ratings.jsonl", Rating)
    dims: dict[str, set[str]] = {}
    for r in ratings:
        dims.setdefault(r.metadata["source"], set()).add(r.dimension)
    for source, found in dims.items():
        rubric = load_rubric(f"empathic-communication-{source}")
        assert {c.id for c in rubric.criteria} == found
        for c in rubric.criteria:
            values = [r.value for r in ratings if r.dimension == c.id]
            assert c.scale is not None
            assert all(c.scale.min <= float(v) <= c.scale.max for v in values if v is not None)
    groups = Counter(r.rater_group for r in ratings)
    assert groups == {"experts": 3150, "crowd": 1050, "llm": 3150, "participant": 300}


def test_duo_and_esconv_rubrics_cover_their_dimensions() -> None:
    duo = {r.dimension for r in read_jsonl(CAL / "duo" / "ratings.jsonl", Rating)}
    assert {c.id for c in load_rubric("duo-dialogue").criteria} == duo
    esconv = read_jsonl(CAL / "esconv" / "ratings.jsonl", Rating)
    survey = {r.dimension for r in esconv if r.item_id.count(":") == 2 and r.rater == "seeker"}
    assert {c.id for c in load_rubric("esconv-survey").criteria} <= survey


def test_ieval_preferences_reference_items() -> None:
    prefs = read_jsonl(CAL / "ieval" / "preferences.jsonl", Preference)
    items = {i.item_id for i in read_jsonl(DATA / "ieval" / "items.jsonl", JudgeItem)}
    assert len(prefs) == 30 * 2 * 6
    for p in prefs:
        assert p.metadata["item_a"] in items and p.metadata["item_b"] in items
