"""What every adapter returns, how it is written to disk, and small shared parsing helpers."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from attune_judge.data._jsonl import write_jsonl
from attune_judge.data._records import ChatMessage, JudgeItem, Preference, Rating
from attune_judge.errors import UserError

__all__ = [
    "AdapterReport",
    "AdapterResult",
    "messages_to_item",
    "parse_number",
    "parse_transcript",
    "require_dir",
    "value_ranges",
    "write_result",
]


class AdapterReport(BaseModel):
    """What a conversion found: counts, ids that did not join, observed value ranges, notes."""

    dataset: str
    """Adapter name (``empathic-communication``, ``duo``, ``ieval``, ``esconv``)."""
    source: str
    """The folder that was converted."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Named counts (records written, files read, rows seen, ...)."""
    unmatched: dict[str, list[str]] = Field(default_factory=dict)
    """Ids that did not join, by what they failed to join with. Nothing is dropped silently."""
    value_ranges: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per dimension: observed min/max, number of values, and the declared scale."""
    notes: list[str] = Field(default_factory=list)
    """Quirks found and how they were handled."""


@dataclass
class AdapterResult:
    """The records converted from one public dataset."""

    ratings: list[Rating] = field(default_factory=list)
    """People's (and recorded judges') ratings, long format."""
    preferences: list[Preference] = field(default_factory=list)
    """Pairwise choices (iEval rankings)."""
    items: list[JudgeItem] = field(default_factory=list)
    """Things a judge can score, where the text is public."""
    report: AdapterReport | None = None
    """Counts, unmatched ids, value ranges and notes."""


def write_result(result: AdapterResult, out_dir: Path) -> dict[str, Path]:
    """Write ``ratings.jsonl``, ``preferences.jsonl``, ``items.jsonl`` and ``report.json``.

    Returns the paths written, by kind.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "ratings": out_dir / "ratings.jsonl",
        "preferences": out_dir / "preferences.jsonl",
        "items": out_dir / "items.jsonl",
        "report": out_dir / "report.json",
    }
    write_jsonl(paths["ratings"], result.ratings)
    write_jsonl(paths["preferences"], result.preferences)
    write_jsonl(paths["items"], result.items)
    report = result.report.model_dump() if result.report else {}
    paths["report"].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return paths


def require_dir(src: Path, *relative: str) -> Path:
    """Check that ``src`` is a folder holding each of ``relative``; raise a ``UserError`` if not."""
    src = Path(src)
    if not src.is_dir():
        raise UserError(f"{src}: not a folder")
    missing = [str(src / r) for r in relative if not (src / r).exists()]
    if missing:
        raise UserError(f"{src}: expected files are missing", [f"{m}: not found" for m in missing])
    return src


def parse_number(text: object) -> float | None:
    """A CSV/JSON cell as a float; empty, ``NaN`` and ``-1``-style codes are the caller's job.

    Returns ``None`` for an empty cell or NaN. Raises ``ValueError`` for text that is not a number.
    """
    if text is None:
        return None
    if isinstance(text, int | float):
        value = float(text)
    else:
        s = str(text).strip()
        if not s:
            return None
        value = float(s)
    return None if math.isnan(value) else value


def value_ranges(
    ratings: Iterable[Rating], scales: dict[str, tuple[float, float]]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Observed numeric range per dimension next to its declared scale.

    Returns the ranges and one line per value outside its declared scale (kept, not dropped).
    """
    seen: dict[str, list[float]] = {}
    missing: dict[str, int] = {}
    outside: list[str] = []
    for r in ratings:
        if r.value is None:
            missing[r.dimension] = missing.get(r.dimension, 0) + 1
            continue
        if isinstance(r.value, str):
            continue
        seen.setdefault(r.dimension, []).append(r.value)
        scale = scales.get(r.dimension)
        if scale and not scale[0] <= r.value <= scale[1]:
            outside.append(f"{r.item_id} {r.rater} {r.dimension}={r.value} outside {scale}")
    out: dict[str, dict[str, Any]] = {}
    for dim in sorted(set(seen) | set(missing)):
        vals = seen.get(dim, [])
        scale = scales.get(dim)
        out[dim] = {
            "min": min(vals) if vals else None,
            "max": max(vals) if vals else None,
            "n": len(vals),
            "missing": missing.get(dim, 0),
            "scale_min": scale[0] if scale else None,
            "scale_max": scale[1] if scale else None,
        }
    return out, outside


_SPEAKER_LINE = re.compile(r"^\s*(Seeker|Supporter)\s*:\s?(.*)$")


def parse_transcript(text: str) -> list[ChatMessage]:
    """Parse ``Seeker: ...`` / ``Supporter: ...`` lines into chat messages.

    Seeker = ``user``, Supporter = ``assistant``. A line without a speaker prefix continues the
    previous message; consecutive messages of one speaker are merged with a newline.
    """
    messages: list[ChatMessage] = []
    for line in text.split("\n"):
        m = _SPEAKER_LINE.match(line)
        if m:
            role = "user" if m.group(1) == "Seeker" else "assistant"
            content = m.group(2).strip()
            if messages and messages[-1].role == role:
                messages[-1].content = (messages[-1].content + "\n" + content).strip()
            else:
                messages.append(ChatMessage(role=role, content=content))
        elif line.strip():
            if not messages:
                raise ValueError(f"text before the first speaker prefix: {line[:60]!r}")
            messages[-1].content = (messages[-1].content + "\n" + line.strip()).strip()
    return messages


def messages_to_item(
    item_id: str,
    conversation_id: str,
    messages: list[ChatMessage],
    candidate_model: str,
    metadata: dict[str, Any],
) -> JudgeItem:
    """A conversation-level item: the last assistant message is the candidate.

    Messages after the last assistant message (a seeker's closing reply) are kept in
    ``metadata["after_candidate"]`` so no text is lost; ``metadata["scope"] = "conversation"``
    says the ratings are about every assistant message, not only the candidate.
    """
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
    if last is None:
        raise ValueError(f"{item_id}: no supporter/bot message")
    meta = dict(metadata)
    meta.setdefault("scope", "conversation")
    after = messages[last + 1 :]
    if after:
        meta["after_candidate"] = [m.model_dump() for m in after]
    return JudgeItem(
        item_id=item_id,
        conversation_id=conversation_id,
        turn=sum(1 for m in messages[: last + 1] if m.role == "assistant"),
        context=messages[:last],
        candidate=messages[last].content,
        candidate_model=candidate_model,
        metadata=meta,
    )
