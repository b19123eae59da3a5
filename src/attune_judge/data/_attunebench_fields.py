"""Field types shared by the AttuneBench models: tolerant parsing, precise error messages.

Every problem is raised as a :class:`pydantic_core.PydanticCustomError` of type ``attunebench``
whose context may carry a ``subpath`` (``.turns[2].turnNumber``) that the loader appends to the
error location, so a message can point below the model that detected it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from attune_judge.data import instrument

__all__ = [
    "ERROR_TYPE",
    "Answer",
    "BehaviourId",
    "Emotion",
    "Intensity",
    "OfficialModel",
    "PairwiseQuestionId",
    "ResponseLabelField",
    "Score17",
    "StrId",
    "Winner",
    "alias_field",
    "int_in",
    "problem",
    "unknown_keys",
]

ERROR_TYPE = "attunebench"


def problem(message: str, subpath: str = "") -> PydanticCustomError:
    """A validation error with a plain message and an optional location below the model."""
    return PydanticCustomError(ERROR_TYPE, "{message}", {"message": message, "subpath": subpath})


class OfficialModel(BaseModel):
    """Base of the AttuneBench models: official (camelCase) keys and Python names both accepted.

    Keys the format does not define are kept (and written back) rather than refused, so that a
    release with more fields than documented still loads; :func:`unknown_keys` lists them, and
    :func:`~attune_judge.data.load_attunebench` reports them as a warning (a misspelt optional
    key would otherwise go unnoticed).
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True, validate_by_alias=True)
    extras_expected: ClassVar[bool] = False
    """True where the format itself allows free keys (metadata, participant profile)."""


def unknown_keys(model: BaseModel, path: str = "$") -> list[str]:
    """JSON paths of every key the AttuneBench format does not define, in document order."""
    found: list[str] = []
    if isinstance(model, OfficialModel) and not model.extras_expected:
        found.extend(f"{path}.{key}" for key in (model.model_extra or {}))
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        alias = field.serialization_alias or name
        if isinstance(value, BaseModel):
            found.extend(unknown_keys(value, f"{path}.{alias}"))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    found.extend(unknown_keys(item, f"{path}.{alias}[{i}]"))
    return found


def alias_field(*aliases: str, default: Any = ..., **kwargs: Any) -> Any:
    """A field read from any of ``aliases`` (first = official key, written back on dump)."""
    if "default_factory" not in kwargs:
        kwargs["default"] = default
    return Field(
        validation_alias=AliasChoices(*aliases),
        serialization_alias=aliases[0],
        **kwargs,
    )


def int_in(value: object, low: int, high: int, what: str) -> int:
    """An integer in ``low..high`` from an int, an integral float or a digit string."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    if number is None:
        raise problem(f"{what} must be an integer {low}-{high}, got {value!r}")
    if not low <= number <= high:
        raise problem(f"{what} {number} is out of range {low}-{high}")
    return number


def _score_1_7(value: object) -> int | None:
    if value is None:
        return None
    return int_in(value, 1, 7, "score")


def _answer(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in instrument.BEHAVIOUR_VALUES:
        return value.strip().lower()
    raise problem(f"behaviour answer must be 'yes', 'no', 'na' or null, got {value!r}")


def _label(value: object) -> str:
    if isinstance(value, str) and value.strip().lower() in instrument.RESPONSE_LABELS:
        return value.strip().lower()
    allowed = ", ".join(repr(k) for k in instrument.RESPONSE_LABELS)
    raise problem(f"response label must be one of {allowed}, got {value!r}")


def _winner(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().upper() in ("A", "B"):
        return value.strip().upper()
    raise problem(f"winner must be 'A', 'B' or null, got {value!r}")


def _emotion(value: object) -> str:
    canonical = instrument.canonical_panas_item(value) if isinstance(value, str) else None
    if canonical is None:
        allowed = ", ".join(instrument.PANAS_ITEMS)
        raise problem(f"emotion {value!r} is not a PANAS-SF item; allowed: {allowed}")
    return canonical


def _intensity(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in instrument.LEGACY_INTENSITY_WORDS:
            return instrument.LEGACY_INTENSITY_WORDS[word]
        if not word.lstrip("-").isdigit():
            words = ", ".join(f"{k}={v}" for k, v in instrument.LEGACY_INTENSITY_WORDS.items())
            raise problem(
                f"intensity must be an integer 1-7, null or a word ({words}), got {value!r}"
            )
    low, high = instrument.MOOD_INTENSITY_SCALE
    return int_in(value, low, high, "intensity")


_PW_BY_LOWER = {k.lower(): k for k in instrument.PAIRWISE_QUESTIONS}


def _pairwise_question(value: object) -> str:
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _PW_BY_LOWER:
            return _PW_BY_LOWER[text.lower()]
        if text[:7].lower() == "custom:" and text[7:].strip():
            return "custom:" + text[7:]
    allowed = ", ".join(instrument.PAIRWISE_QUESTIONS)
    raise problem(
        f"pairwise question id must be one of {allowed} or 'custom:<text>', got {value!r}"
    )


def _behaviour_id(value: object) -> str:
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 1 and text[0] in "bB" and text[1:].isdigit():
            return "B" + text[1:]
    raise problem(f"behaviour question id must look like 'B1'..'B505', got {value!r}")


def _str_id(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


Answer = Annotated[Literal["yes", "no", "na"] | None, BeforeValidator(_answer)]
"""A behaviour answer: ``yes`` / ``no`` / ``na``, or ``None`` when not answered (any case)."""
ResponseLabelField = Annotated[instrument.ResponseLabel, BeforeValidator(_label)]
"""A pairwise response label."""
Winner = Annotated[Literal["A", "B"] | None, BeforeValidator(_winner)]
"""The preferred side of a pairwise comparison, ``None`` when not answered."""
Emotion = Annotated[str, BeforeValidator(_emotion)]
"""A PANAS-SF item in the instrument's spelling (input in any case)."""
Intensity = Annotated[int | None, BeforeValidator(_intensity)]
"""A mood-tag intensity 1..7 or ``None``; legacy words mild=2, moderate=4, intense=6."""
PairwiseQuestionId = Annotated[str, BeforeValidator(_pairwise_question)]
"""``general``, ``PW1``..``PW15`` or ``custom:<text>``."""
BehaviourId = Annotated[str, BeforeValidator(_behaviour_id)]
"""A behaviour item id ``B<number>``."""
Score17 = Annotated[int | None, BeforeValidator(_score_1_7)]
"""An integer 1..7 or ``None``."""
StrId = Annotated[str, BeforeValidator(_str_id)]
"""An identifier; integers are accepted and turned into strings."""
