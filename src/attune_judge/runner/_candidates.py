"""Candidate responses: the user's own (a JSONL file), drafted ones, and the pseudo-models.

A candidate is one reply at one annotated turn of one conversation, written by one model.
The runner turns each candidate into a :class:`~attune_judge.data.JudgeItem` by copying the
turn's context and participant-preferred reference from the AttuneBench item of that turn.

The pseudo-models ``original`` (the reply the participant saw), ``llm_improved`` and
``human_edited`` (the two AttuneBench alternates) need no candidates file: they come with the
data. Scored together they give a built-in sanity ordering — a judge that grades against the
participant-edited reference should rank ``human_edited`` first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from attune_judge.data import JudgeItem, attunebench_problems, make_id
from attune_judge.errors import UserError

__all__ = [
    "PSEUDO_MODELS",
    "RESERVED_MODELS",
    "Candidate",
    "items_for_candidates",
    "read_candidates",
]

PSEUDO_MODELS: tuple[str, ...] = ("original", "llm_improved", "human_edited")
"""Candidates that every AttuneBench turn carries: the original reply and the two alternates."""

_MAX_LISTED = 20


RESERVED_MODELS: tuple[str, ...] = (*PSEUDO_MODELS, "reference")
"""Names a candidates file may not use: the data's own replies (the pseudo-models) and the
participant-preferred ``reference`` a pairwise run compares against."""

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters (NUL, escape, vertical tab, form feed, C1 incl. NEL); tab, newline and
carriage return are text."""


def _text(value: str, *, name: str) -> str:
    if not value.strip():
        raise ValueError(f"{name} is empty")
    bad = _CONTROL.search(value)
    if bad is not None:
        raise ValueError(
            f"{name} holds the control character U+{ord(bad.group()):04X} at position {bad.start()}"
        )
    return value


class Candidate(BaseModel):
    """One candidate reply at one annotated turn (one line of a candidates JSONL file).

    Types are strict (a turn is a JSON integer: ``1.0``, ``"1"`` and ``true`` are refused);
    texts are not empty and hold no control character; the model name is not one of
    :data:`RESERVED_MODELS`.
    """

    model_config = ConfigDict(extra="forbid")

    conversation_id: str = Field(strict=True)
    """The AttuneBench conversation the reply belongs to."""
    turn: int = Field(strict=True)
    """The turn number whose participant message the reply answers."""
    model: str = Field(strict=True)
    """Who wrote the reply (a model string, or any name the user chooses)."""
    response: str = Field(strict=True)
    """The reply text."""
    metadata: dict[str, Any] = Field(default_factory=dict, strict=True)
    """Anything else worth keeping (generation settings, token usage, latency, ...)."""

    @field_validator("conversation_id", "response")
    @classmethod
    def _not_empty(cls, value: str, info: ValidationInfo) -> str:
        return _text(value, name=str(info.field_name))

    @field_validator("model")
    @classmethod
    def _model_name(cls, value: str) -> str:
        _text(value, name="model name")
        if value.strip().lower() in RESERVED_MODELS:
            raise ValueError(
                f"model name {value!r} is reserved for the data's own replies "
                f"({', '.join(RESERVED_MODELS)}); name the model that wrote the reply"
            )
        return value


class _Keys:
    """``object_pairs_hook`` of ``json.loads`` that notes every repeated key."""

    def __init__(self) -> None:
        self.repeated: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                self.repeated.append(key)
            out[key] = value
        return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_line(raw: bytes, where: str, problems: list[str]) -> Any:
    """The JSON object of one line, or ``None`` with its problems noted."""
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        path, line = where.rsplit(":", 1)  # the wording of every other not-UTF-8 input
        problems.append(
            f"{path}: not UTF-8 text (line {line}, column {exc.start + 1}: byte "
            f"0x{raw[exc.start]:02x} is not UTF-8); save the file as UTF-8"
        )
        return None
    keys = _Keys()
    try:
        obj = json.loads(text, object_pairs_hook=keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        problems.append(f"{where}: column {exc.colno}: not valid JSON: {exc.msg}")
        return None
    except ValueError as exc:
        problems.append(f"{where}: {exc}")
        return None
    problems.extend(f"{where}: key {k!r} appears twice in one object" for k in keys.repeated)
    if not isinstance(obj, dict):
        problems.append(f"{where}: expected a JSON object, got {type(obj).__name__}")
        return None
    return obj if not keys.repeated else None


def read_candidates(path: Path) -> list[Candidate]:
    """Read a candidates JSONL file, checked as AttuneBench files are: every problem of the
    file at once, and nothing returned unless every line is a good candidate.

    Problems: a line that is not UTF-8 or not JSON, a key given twice, a field of the wrong
    type (strict: a turn of ``1.0``, ``"1"`` or ``true``), an empty or whitespace-only text,
    a control character (NUL, ...), an empty or reserved model name (:data:`RESERVED_MODELS`),
    an unknown field, and a repeated ``(conversation_id, turn, model)``.

    Raises
    ------
    UserError
        For a missing or unreadable file, or any problem (each named by file, line and field).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    seen: dict[tuple[str, int, str], int] = {}
    out: list[Candidate] = []
    problems: list[str] = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        obj = _parse_line(line, where, problems)
        if obj is None:
            continue
        try:
            cand = Candidate.model_validate(obj)
        except ValidationError as exc:
            problems.extend(
                p.replace("Value error, ", "") for p in attunebench_problems(exc, where)
            )
            continue
        key = (cand.conversation_id, cand.turn, cand.model)
        if key in seen:
            problems.append(
                f"{where}: duplicate candidate for conversation {cand.conversation_id!r} "
                f"turn {cand.turn} model {cand.model!r} (also line {seen[key]})"
            )
        seen.setdefault(key, n)
        out.append(cand)
    if problems:
        raise UserError(
            f"{path}: {len(problems)} problem(s) in the candidates file; nothing was judged",
            problems,
        )
    return out


def items_for_candidates(
    base_items: Sequence[JudgeItem],
    candidates: Iterable[Candidate],
    *,
    source: str = "candidates",
) -> list[JudgeItem]:
    """One JudgeItem per candidate, with the context and reference of its turn.

    Parameters
    ----------
    base_items
        One item per annotated turn (any candidate model): supplies the context, reference and
        metadata of ``(conversation_id, turn)``.
    candidates
        The replies to judge.
    source
        Name of the candidates' origin, used in error messages (usually the file path).

    Returns
    -------
    list[JudgeItem]
        Items with ``item_id = conversation:turn:model``, in the order of ``candidates``.

    Raises
    ------
    UserError
        When a candidate names a conversation or turn that has no annotated item.
    """
    by_turn: dict[tuple[str, int | None], JudgeItem] = {}
    for item in base_items:
        by_turn.setdefault((item.conversation_id, item.turn), item)
    items: list[JudgeItem] = []
    unknown: list[str] = []
    for cand in candidates:
        base = by_turn.get((cand.conversation_id, cand.turn))
        if base is None:
            unknown.append(
                f"{source}: conversation {cand.conversation_id!r} turn {cand.turn} "
                f"(model {cand.model!r}) is not an annotated turn of the data"
            )
            continue
        metadata = {**base.metadata, **cand.metadata}
        items.append(
            base.model_copy(
                update={
                    "item_id": make_id(cand.conversation_id, cand.turn, cand.model),
                    "candidate": cand.response,
                    "candidate_model": cand.model,
                    "metadata": metadata,
                },
                deep=True,
            )
        )
    if unknown:
        raise UserError(
            f"{source}: {len(unknown)} candidate(s) do not match an annotated turn",
            unknown[:_MAX_LISTED]
            + (
                [f"... and {len(unknown) - _MAX_LISTED} more"] if len(unknown) > _MAX_LISTED else []
            ),
        )
    return items
