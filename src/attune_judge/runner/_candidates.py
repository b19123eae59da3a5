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

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeItem, iter_jsonl, make_id
from attune_judge.errors import UserError

__all__ = [
    "PSEUDO_MODELS",
    "Candidate",
    "items_for_candidates",
    "read_candidates",
]

PSEUDO_MODELS: tuple[str, ...] = ("original", "llm_improved", "human_edited")
"""Candidates that every AttuneBench turn carries: the original reply and the two alternates."""

_MAX_LISTED = 20


class Candidate(BaseModel):
    """One candidate reply at one annotated turn (one line of a candidates JSONL file)."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    """The AttuneBench conversation the reply belongs to."""
    turn: int
    """The turn number whose participant message the reply answers."""
    model: str
    """Who wrote the reply (a model string, or any name the user chooses)."""
    response: str
    """The reply text."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping (generation settings, token usage, latency, ...)."""


def read_candidates(path: Path) -> list[Candidate]:
    """Read a candidates JSONL file, refusing a repeated ``(conversation_id, turn, model)``.

    Raises
    ------
    UserError
        For a missing file, a bad line (file, line and field named) or duplicated keys.
    """
    path = Path(path)
    seen: set[tuple[str, int, str]] = set()
    out: list[Candidate] = []
    problems: list[str] = []
    for i, cand in enumerate(iter_jsonl(path, Candidate, tolerate_torn_tail=False)):
        key = (cand.conversation_id, cand.turn, cand.model)
        if key in seen:
            problems.append(
                f"{path}: record {i + 1}: duplicate candidate for conversation "
                f"{cand.conversation_id!r} turn {cand.turn} model {cand.model!r}"
            )
        seen.add(key)
        out.append(cand)
    if problems:
        raise UserError(f"{path}: {len(problems)} duplicated candidate(s)", problems[:_MAX_LISTED])
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
