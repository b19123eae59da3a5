"""The AttuneBench annotation instrument as typed constants.

Everything here is read once from the package data file ``attune_judge/data/instrument.json``
(a copy of the design's ``attunebench-instrument.json``): the PANAS-SF emotion items with their
valence and valence-arousal coordinates, the behaviour items (B1..B505) with their category and
both phrasings, the pairwise questions, the response labels, the conversation-wide options and
the draft-judge dimensions.

Examples
--------
>>> from attune_judge.data import instrument
>>> len(instrument.PANAS_ITEMS), instrument.PANAS_ITEMS[0]
(20, 'Proud')
>>> instrument.PANAS_VALENCE["Nervous"]
'negative'
>>> instrument.canonical_panas_item("nervous")
'Nervous'
>>> instrument.BEHAVIOUR_ITEMS_BY_ID["B13"].participant_text
'Did the model ask a follow-up question?'
>>> instrument.LABEL_TO_PSEUDO_MODEL["human"]
'human_edited'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Literal

__all__ = [
    "BEHAVIOUR_CATEGORIES",
    "BEHAVIOUR_ITEMS",
    "BEHAVIOUR_ITEMS_BY_ID",
    "BEHAVIOUR_VALUES",
    "DRAFT_JUDGE_DIMENSIONS",
    "DRAFT_JUDGE_SCALE",
    "FOUR_BRANCHES",
    "FOUR_BRANCH_SCALE",
    "LABEL_TO_PSEUDO_MODEL",
    "LEGACY_INTENSITY_WORDS",
    "MOOD_INTENSITY_SCALE",
    "PAIRWISE_QUESTIONS",
    "PANAS_ITEMS",
    "PANAS_ITEM_INFO",
    "PANAS_ITEM_SCALE",
    "PANAS_NEGATIVE",
    "PANAS_POSITIVE",
    "PANAS_TOTAL_RANGE",
    "PANAS_VALENCE",
    "PSEUDO_MODELS",
    "Q1_LOOKING_FOR_OPTIONS",
    "Q2_EMOTION_CLARITY_OPTIONS",
    "Q3_MODEL_FIT_OPTIONS",
    "RESPONSE_LABELS",
    "VALENCE_AROUSAL",
    "BehaviourItem",
    "PanasItem",
    "ResponseLabel",
    "canonical_panas_item",
    "raw_instrument",
]

Valence = Literal["positive", "negative"]
ResponseLabel = Literal["original", "alternate", "human"]


@dataclass(frozen=True)
class PanasItem:
    """One PANAS-SF item (an emotion word)."""

    name: str
    """The item as the instrument spells it (``Nervous``)."""
    valence: Valence
    """``positive`` or ``negative`` affect."""
    valence_arousal: tuple[float, float]
    """Coordinates in [0, 1] x [0, 1] used for valence-arousal similarity."""


@dataclass(frozen=True)
class BehaviourItem:
    """One binary behaviour item answered per turn (yes / no / na)."""

    id: str
    """``B1`` .. ``B505``."""
    category: str
    """``perceiving``, ``understanding``, ``using``, ``regulating`` or ``cognitive_framing``."""
    observer_text: str
    """The question as an outside observer reads it (HP = human participant)."""
    participant_text: str
    """The question as the participant was asked it."""


def raw_instrument() -> dict[str, Any]:
    """The instrument file as parsed JSON (a fresh copy each call)."""
    text = resources.files("attune_judge.data").joinpath("instrument.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


_RAW: Final = raw_instrument()
_PANAS: Final = _RAW["panas_sf"]
_WIDE: Final = _RAW["conversation_wide"]

PANAS_ITEMS: Final[tuple[str, ...]] = tuple(_PANAS["items_in_order"])
"""The 20 PANAS-SF items in questionnaire order."""
PANAS_POSITIVE: Final[tuple[str, ...]] = tuple(_PANAS["positive"])
"""The 10 positive-affect items."""
PANAS_NEGATIVE: Final[tuple[str, ...]] = tuple(_PANAS["negative"])
"""The 10 negative-affect items."""
PANAS_VALENCE: Final[dict[str, Valence]] = {
    **dict.fromkeys(PANAS_POSITIVE, "positive"),
    **dict.fromkeys(PANAS_NEGATIVE, "negative"),
}
"""Item name -> ``positive`` / ``negative``."""
VALENCE_AROUSAL: Final[dict[str, tuple[float, float]]] = {
    name: (float(v), float(a)) for name, (v, a) in _PANAS["valence_arousal"].items()
}
"""Item name -> (valence, arousal) coordinates."""
PANAS_ITEM_INFO: Final[dict[str, PanasItem]] = {
    name: PanasItem(name, PANAS_VALENCE[name], VALENCE_AROUSAL[name]) for name in PANAS_ITEMS
}
"""Item name -> :class:`PanasItem`."""
PANAS_ITEM_SCALE: Final[tuple[int, int]] = (
    int(_PANAS["item_scale"][0]),
    int(_PANAS["item_scale"][1]),
)
"""Each PANAS item is answered on 1..7."""
PANAS_TOTAL_RANGE: Final[tuple[int, int]] = (
    int(_PANAS["total_range"][0]),
    int(_PANAS["total_range"][1]),
)
"""A positive or negative affect total (sum of 10 items) lies in 10..70."""

MOOD_INTENSITY_SCALE: Final[tuple[int, int]] = (
    int(_RAW["mood_tag_intensity"]["scale"][0]),
    int(_RAW["mood_tag_intensity"]["scale"][1]),
)
"""Intensity of a mood-shift tag: 1..7 (or null)."""
LEGACY_INTENSITY_WORDS: Final[dict[str, int]] = {
    str(k): int(v) for k, v in _RAW["mood_tag_intensity"]["legacy_words"].items()
}
"""Older files write intensity as a word: mild = 2, moderate = 4, intense = 6."""

BEHAVIOUR_ITEMS: Final[tuple[BehaviourItem, ...]] = tuple(
    BehaviourItem(
        id=item["id"],
        category=item["category"],
        observer_text=item["observer_text"],
        participant_text=item["participant_text"],
    )
    for item in _RAW["behavior_items"]
)
"""All behaviour items of the instrument, in file order."""
BEHAVIOUR_ITEMS_BY_ID: Final[dict[str, BehaviourItem]] = {b.id: b for b in BEHAVIOUR_ITEMS}
"""Behaviour item id -> :class:`BehaviourItem`."""
BEHAVIOUR_CATEGORIES: Final[tuple[str, ...]] = tuple(
    dict.fromkeys(b.category for b in BEHAVIOUR_ITEMS)
)
"""The behaviour categories in first-seen order."""
BEHAVIOUR_VALUES: Final[tuple[str, ...]] = tuple(_RAW["behavior_values"])
"""Answer values of a behaviour item: ``yes``, ``no``, ``na`` (null = not answered)."""

PAIRWISE_QUESTIONS: Final[dict[str, str]] = dict(_RAW["pairwise_questions"])
"""Pairwise question id (``general``, ``PW1`` .. ``PW15``) -> question text."""
RESPONSE_LABELS: Final[dict[str, str]] = dict(_RAW["pairwise_response_labels"])
"""Pairwise response label (``original``, ``alternate``, ``human``) -> what it designates."""
LABEL_TO_PSEUDO_MODEL: Final[dict[str, str]] = {
    "original": "original",
    "alternate": "llm_improved",
    "human": "human_edited",
}
"""Pairwise response label -> the pseudo-model name used in JudgeItem / Preference records."""
PSEUDO_MODELS: Final[tuple[str, ...]] = ("original", "llm_improved", "human_edited")
"""The three responses of a turn as pseudo-models: the OM's reply, the LLM-improved one and
the participant-edited one."""

Q1_LOOKING_FOR_OPTIONS: Final[tuple[str, ...]] = tuple(_WIDE["q1_lookingFor_options"])
"""Options of q1 (what the participant was looking for; several may be chosen)."""
Q2_EMOTION_CLARITY_OPTIONS: Final[tuple[str, ...]] = tuple(_WIDE["q2_emotionClarity_options"])
"""Options of q2 (how clear the participant's emotions were)."""
Q3_MODEL_FIT_OPTIONS: Final[tuple[str, ...]] = tuple(_WIDE["q3_modelFit_options_best_to_worst"])
"""Options of q3 (how well the model fit), ordered best to worst."""
FOUR_BRANCHES: Final[tuple[str, ...]] = tuple(_WIDE["four_branches"])
"""The four emotional-intelligence branches scored at conversation level."""
FOUR_BRANCH_SCALE: Final[tuple[int, int]] = (
    int(_WIDE["four_branch_scale"][0]),
    int(_WIDE["four_branch_scale"][1]),
)
"""Four-branch scores are on 1..7."""

DRAFT_JUDGE_DIMENSIONS: Final[tuple[str, ...]] = tuple(_RAW["draft_judge_dimensions"]["dimensions"])
"""Dimensions a draft judge rates relative to the human-edited reference."""
DRAFT_JUDGE_SCALE: Final[tuple[int, int]] = (
    int(_RAW["draft_judge_dimensions"]["scale"][0]),
    int(_RAW["draft_judge_dimensions"]["scale"][1]),
)
"""Draft-judge dimensions are on 1..7; normalised score = (mean - 1) / 6."""

_PANAS_BY_LOWER: Final[dict[str, str]] = {name.lower(): name for name in PANAS_ITEMS}


def canonical_panas_item(name: str) -> str | None:
    """The instrument's spelling of a PANAS-SF item given in any case, or ``None``.

    Surrounding whitespace is ignored: ``" nervous "`` -> ``"Nervous"``.
    """
    return _PANAS_BY_LOWER.get(name.strip().lower())
