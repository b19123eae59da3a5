"""The instrument constants match the design's instrument file and the PANAS-SF definition."""

from __future__ import annotations

import json

from attune_judge.data import instrument
from tests.conftest import DESIGN


def test_packaged_instrument_is_the_design_file() -> None:
    design = json.loads((DESIGN / "attunebench-instrument.json").read_text(encoding="utf-8"))
    assert instrument.raw_instrument() == design


def test_panas_sf_has_ten_positive_and_ten_negative_items() -> None:
    # PANAS-SF: 20 items, 10 positive + 10 negative, disjoint, union = all items
    assert len(instrument.PANAS_ITEMS) == 20
    assert len(instrument.PANAS_POSITIVE) == len(instrument.PANAS_NEGATIVE) == 10
    assert set(instrument.PANAS_POSITIVE) | set(instrument.PANAS_NEGATIVE) == set(
        instrument.PANAS_ITEMS
    )
    assert not set(instrument.PANAS_POSITIVE) & set(instrument.PANAS_NEGATIVE)
    assert instrument.PANAS_VALENCE["Afraid"] == "negative"
    assert instrument.PANAS_VALENCE["Inspired"] == "positive"


def test_valence_arousal_coordinates_cover_every_item() -> None:
    assert set(instrument.VALENCE_AROUSAL) == set(instrument.PANAS_ITEMS)
    assert instrument.PANAS_ITEM_INFO["Afraid"].valence_arousal == (0.073, 0.84)
    # positive items sit above 0.5 valence, negative below (true of the published values)
    for name, info in instrument.PANAS_ITEM_INFO.items():
        assert (info.valence_arousal[0] > 0.5) == (info.valence == "positive"), name


def test_behaviour_items_have_both_phrasings_and_known_categories() -> None:
    assert len(instrument.BEHAVIOUR_ITEMS) == 36  # 20 core + 16 extended items in the file
    b1 = instrument.BEHAVIOUR_ITEMS_BY_ID["B1"]
    assert b1.category == "perceiving"
    assert "HP's message" in b1.observer_text and "your message" in b1.participant_text
    assert set(instrument.BEHAVIOUR_CATEGORIES) == {
        "perceiving",
        "understanding",
        "using",
        "regulating",
        "cognitive_framing",
    }


def test_pairwise_questions_labels_and_options() -> None:
    assert list(instrument.PAIRWISE_QUESTIONS) == ["general"] + [f"PW{i}" for i in range(1, 16)]
    assert set(instrument.RESPONSE_LABELS) == {"original", "alternate", "human"}
    assert instrument.LABEL_TO_PSEUDO_MODEL == {
        "original": "original",
        "alternate": "llm_improved",
        "human": "human_edited",
    }
    assert instrument.Q3_MODEL_FIT_OPTIONS[0] == "Very well-matched and adaptive"
    assert len(instrument.Q1_LOOKING_FOR_OPTIONS) == 7
    assert instrument.FOUR_BRANCHES == ("perceiving", "facilitating", "understanding", "managing")
    assert instrument.LEGACY_INTENSITY_WORDS == {"mild": 2, "moderate": 4, "intense": 6}
    assert instrument.DRAFT_JUDGE_DIMENSIONS[0] == "overall_score"


def test_canonical_panas_item_ignores_case_and_rejects_others() -> None:
    assert instrument.canonical_panas_item(" ENTHUSIASTIC ") == "Enthusiastic"
    assert instrument.canonical_panas_item("sad") is None
