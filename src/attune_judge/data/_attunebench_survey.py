"""Conversation-level parts of an AttuneBench file: metadata, profile, PANAS, wide questions."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, SerializationInfo, model_serializer
from pydantic import model_validator as _model_validator
from pydantic_core import PydanticCustomError

from attune_judge.data import instrument
from attune_judge.data._attunebench_fields import (
    OfficialModel,
    Score17,
    alias_field,
    int_in,
    problem,
)

__all__ = ["ConversationWide", "FourBranchScores", "Metadata", "Panas", "ParticipantProfile"]


class Metadata(OfficialModel):
    """Conversation metadata. Keys beyond the documented ones are kept as they are."""

    model_config = ConfigDict(extra="allow", validate_by_name=True, validate_by_alias=True)
    extras_expected = True

    model: str | None = None
    """The original model (OM) the participant talked to (anonymised in the release)."""
    provider: str | None = None
    """The OM's provider."""
    category: str | None = None
    """Topic category of the conversation."""
    subtopic: str | None = None
    """Finer topic."""
    turn_count: int | None = alias_field("turnCount", default=None)
    """Number of turns as recorded by the study platform."""
    timestamp: str | None = None
    """When the conversation took place (as written in the file)."""


class ParticipantProfile(OfficialModel):
    """Who the participant is. Keys beyond the documented ones are kept as they are."""

    model_config = ConfigDict(extra="allow", validate_by_name=True, validate_by_alias=True)
    extras_expected = True

    participant_id: str | int | None = None
    """Anonymous participant id."""
    age: int | str | None = None
    """Age in years, or an age band."""
    traits: Any = None
    """Self-described traits (free form)."""
    goals: Any = None
    """What the participant wanted from the conversation (free form)."""
    responses: dict[str, Any] | None = None
    """Answers to profile questions."""


_TOTAL_KEYS = {
    "totalpositiveaffect": "total_positive_affect",
    "total_positive_affect": "total_positive_affect",
    "totalnegativeaffect": "total_negative_affect",
    "total_negative_affect": "total_negative_affect",
}
_ALLOWED_ITEMS = ", ".join(instrument.PANAS_ITEMS)


class _PanasParser:
    """Collects items, totals and extra keys from either PANAS layout, noting every problem."""

    def __init__(self) -> None:
        self.items: dict[str, int] = {}
        self.totals: dict[str, int | None] = {}
        self.extra: dict[str, Any] = {}
        self.issues: list[tuple[str, str]] = []
        self.seen: set[str] = set()

    def item(self, key: str, value: object, where: str, *, allow_extra: bool) -> None:
        name = instrument.canonical_panas_item(key)
        if name is None:
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if allow_extra and not numeric:
                self.extra[key] = value
            else:
                self.issues.append(
                    (where, f"{key!r} is not a PANAS-SF item; allowed: {_ALLOWED_ITEMS}")
                )
            return
        if name in self.seen:
            self.issues.append((where, f"PANAS item {name} is given more than once"))
            return
        self.seen.add(name)
        low, high = instrument.PANAS_ITEM_SCALE
        try:
            self.items[name] = int_in(value, low, high, f"PANAS item {name}")
        except PydanticCustomError as exc:
            self.issues.append((where, exc.message()))

    def total(self, key: str, value: object, where: str) -> None:
        field = _TOTAL_KEYS[key.lower()]
        if value is None:
            self.totals[field] = None
            return
        low, high = instrument.PANAS_TOTAL_RANGE
        try:
            self.totals[field] = int_in(value, low, high, key)
        except PydanticCustomError as exc:
            self.issues.append((where, exc.message()))

    def derive(self, field: str, names: tuple[str, ...]) -> int | None:
        given = self.totals.get(field)
        if given is not None:
            return given
        if all(n in self.items for n in names):
            return sum(self.items[n] for n in names)
        return None


class Panas(OfficialModel):
    """PANAS-SF answers: 20 items on 1..7 and the positive / negative affect totals (10..70).

    Read from items at top level or under ``responses``, with keys in any case. A total that
    is absent is derived from the items when all ten items of its valence are present. Other
    non-numeric keys are kept in :attr:`extra`; an unknown key with a number is an error (a
    misspelt item). Written back with the items at top level in the instrument's spelling.
    """

    items: dict[str, int] = Field(default_factory=dict)
    """Item name (instrument spelling) -> answer 1..7, in questionnaire order."""
    total_positive_affect: int | None = None
    """Sum of the ten positive items (as given, or derived)."""
    total_negative_affect: int | None = None
    """Sum of the ten negative items (as given, or derived)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Keys of the PANAS object that are neither items nor totals, kept as they are."""

    @_model_validator(mode="before")
    @classmethod
    def _read_layouts(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise problem(f"PANAS must be an object of item answers, got {type(data).__name__}")
        parser = _PanasParser()
        for key, value in data.items():
            if key == "responses" and isinstance(value, dict):
                for sub, sub_value in value.items():
                    parser.item(str(sub), sub_value, f".responses.{sub}", allow_extra=False)
            elif key == "items" and isinstance(value, dict):  # our own Python-name dump
                for sub, sub_value in value.items():
                    parser.item(str(sub), sub_value, f".items.{sub}", allow_extra=False)
            elif key == "extra" and isinstance(value, dict):
                parser.extra.update(value)
            elif str(key).lower() in _TOTAL_KEYS:
                parser.total(str(key), value, f".{key}")
            else:
                parser.item(str(key), value, f".{key}", allow_extra=True)
        if parser.issues:
            raise problem("; ".join(m for _, m in parser.issues), parser.issues[0][0])
        return {
            "items": {n: parser.items[n] for n in instrument.PANAS_ITEMS if n in parser.items},
            "total_positive_affect": parser.derive(
                "total_positive_affect", instrument.PANAS_POSITIVE
            ),
            "total_negative_affect": parser.derive(
                "total_negative_affect", instrument.PANAS_NEGATIVE
            ),
            "extra": parser.extra,
        }

    @model_serializer(mode="plain")
    def _write(self, info: SerializationInfo) -> dict[str, Any]:
        if not info.by_alias:
            return {
                "items": dict(self.items),
                "total_positive_affect": self.total_positive_affect,
                "total_negative_affect": self.total_negative_affect,
                "extra": dict(self.extra),
            }
        out: dict[str, Any] = dict(self.items)
        out["totalPositiveAffect"] = self.total_positive_affect
        out["totalNegativeAffect"] = self.total_negative_affect
        out.update(self.extra)
        return out


class FourBranchScores(OfficialModel):
    """The participant's 1..7 scores of the model on the four emotional-intelligence branches."""

    perceiving: Score17 = None
    """Perceiving emotions."""
    facilitating: Score17 = None
    """Using emotions to facilitate thought."""
    understanding: Score17 = None
    """Understanding emotions."""
    managing: Score17 = None
    """Managing emotions."""


def _as_list(value: object) -> object:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return value


StrList = Annotated[list[str], BeforeValidator(_as_list)]


class ConversationWide(OfficialModel):
    """Questions answered once per conversation. Legacy keys ``Q1``, ``Q2``, ``Q3`` are read."""

    q1_looking_for: StrList = alias_field("q1_lookingFor", "Q1", default_factory=list)
    """What the participant was looking for (options of ``Q1_LOOKING_FOR_OPTIONS``)."""
    q2_emotion_clarity: str | None = alias_field("q2_emotionClarity", "Q2", default=None)
    """How clear the participant's emotions were (``Q2_EMOTION_CLARITY_OPTIONS``)."""
    q3_model_fit: str | None = alias_field("q3_modelFit", "Q3", default=None)
    """How well the model fit, ordinal best to worst (``Q3_MODEL_FIT_OPTIONS``)."""
    q3_follow_up_what_felt_off: StrList = alias_field(
        "q3_followUp_whatFeltOff", default_factory=list
    )
    """What felt off, when the fit was not perfect."""
    four_branch_scores: FourBranchScores | None = alias_field("fourBranchScores", default=None)
    """Four-branch scores 1..7."""
