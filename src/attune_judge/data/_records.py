"""Generic records shared by every layer: what to judge, what a judge said, what people said.

These are the contract between data adapters, judges, the runner and the calibration layer.
We own this format, so unknown fields are rejected (``extra="forbid"``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChatMessage",
    "JudgeItem",
    "Judgment",
    "JudgmentStatus",
    "Preference",
    "Rating",
    "TokenUsage",
    "make_id",
]

JudgmentStatus = Literal["ok", "parse_error", "lm_error", "refused"]


def make_id(*parts: object) -> str:
    """Join id parts with ``:`` (``conversation:turn:...``); ``None`` parts are skipped.

    Colons inside a part are kept as they are: ids are compared as whole strings, never split.
    """
    return ":".join(str(p) for p in parts if p is not None)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)


class ChatMessage(_Record):
    """One message of a conversation, in chat-completions form."""

    role: Literal["user", "assistant", "system"]
    """Who wrote it: ``user`` is the human participant, ``assistant`` the model."""
    content: str
    """The message text."""


class JudgeItem(_Record):
    """One response to judge, in its conversation context."""

    item_id: str
    """Stable id, ``conversation:turn:candidate_model`` for AttuneBench-derived items."""
    conversation_id: str
    """The conversation (the cluster for bootstrap intervals)."""
    turn: int | None = None
    """Turn number inside the conversation, when there is one."""
    context: list[ChatMessage]
    """Chat messages up to and including the participant's message the candidate answers."""
    candidate: str
    """The response being judged."""
    candidate_model: str
    """Who wrote the candidate (a model string or a pseudo-model such as ``original``)."""
    reference: str | None = None
    """The participant-preferred response (AttuneBench: the participant-edited one), if any."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping (source dataset, category, ...)."""


class TokenUsage(_Record):
    """Token counts of the LM calls behind one judgment (summed over calls)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    """Number of LM calls that were made (cache hits included)."""


class Judgment(_Record):
    """One judge output. A failure is a record with a non-ok status, never a silent default."""

    item_id: str
    """The judged item's id."""
    judge_id: str
    """Hash of the judge spec: program name+version, rubric id/version/hash, lm string, decoding."""
    conversation_id: str | None = None
    """Copied from the item so statistics can cluster without a join."""
    candidate_model: str | None = None
    """Copied from the item so statistics can group without a join."""
    status: JudgmentStatus = "ok"
    """``ok``, or why there is no usable verdict."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Score per rubric criterion (raw scale)."""
    overall: float | None = None
    """Aggregated score on the rubric's raw scale (mean or weighted, per the rubric)."""
    normalized: float | None = None
    """Overall score mapped to [0, 1] by the rubric's scale: (overall - min) / (max - min)."""
    verdict: str | None = None
    """Categorical verdict for pairwise judges: ``A``, ``B``, ``tie`` or ``inconsistent``."""
    rationale: str | None = None
    """The judge's short explanation, if it gave one."""
    error: str | None = None
    """Error text for a failed judgment."""
    raw_output: str | None = None
    """The raw LM text, kept whenever parsing failed (and optionally otherwise)."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Program-specific extras: both raw pairwise verdicts, behaviour answers, jury members."""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """Token usage of the calls behind this judgment."""
    cost: float | None = None
    """Cost in USD where the provider reports it."""
    latency_s: float | None = None
    """Wall time spent on this judgment."""
    timestamp: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    """When the judgment was recorded (UTC, ISO 8601)."""


class Rating(_Record):
    """One rater's value on one dimension of one item (long format)."""

    item_id: str
    """What was rated (joins human and judge ratings)."""
    rater: str
    """Who rated it (``expert1``, ``participant``, a judge id, ...)."""
    rater_group: str | None = None
    """A group of raters (``experts``, ``crowd``, ``llm``, ``participant``, ``observers``)."""
    dimension: str = "overall"
    """What was rated (a rubric criterion, a behaviour item id, ...)."""
    value: float | str | None
    """The rating: a number on the dimension's scale, or a category; ``None`` = missing."""
    cluster: str | None = None
    """The resampling unit (usually the conversation id)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping (scale, source dataset, ...)."""


class Preference(_Record):
    """One pairwise choice between two options for one item."""

    item_id: str
    """Stable id of the comparison (``conversation:turn:pairwise:question:index`` ...)."""
    option_a: str
    """Identifier of the first option (a response label or model name)."""
    option_b: str
    """Identifier of the second option."""
    text_a: str | None = None
    """The first option's text, when known."""
    text_b: str | None = None
    """The second option's text, when known."""
    winner: Literal["A", "B", "tie"] | None
    """Which option was preferred; ``tie`` when explicitly tied, ``None`` when not answered."""
    rater: str = "participant"
    """Who chose."""
    rater_group: str | None = None
    """A group of raters."""
    question: str = "general"
    """Which question the choice answers (``PW1``..``PW15``, ``general``, ``custom:...``)."""
    cluster: str | None = None
    """The resampling unit (usually the conversation id)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else worth keeping."""
