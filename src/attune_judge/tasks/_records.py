"""``TaskRecord``: one evaluated unit of one task for one model, as stored in ``records.jsonl``.

The run's append-only log is ``judgments.jsonl`` (the runner's, which resume reads); each
:class:`TaskRecord` is the tidy view of the effective judgment of one planned unit, written
after every invocation, so analysis never has to dig in ``Judgment.details``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import Judgment, TokenUsage

__all__ = ["TaskRecord", "record_from_judgment"]


class TaskRecord(BaseModel):
    """One unit (turn, comparison or conversation) of one task, evaluated for one model."""

    model_config = ConfigDict(extra="forbid")

    model: str
    """The evaluated model's label."""
    task: str
    """``drafting``, ``emotion``, ``behaviour``, ``preference`` or ``conversation``."""
    conversation_id: str
    """The conversation (the resampling cluster)."""
    turn: int | None = None
    """The turn number; ``None`` for conversation-level units."""
    unit_id: str
    """The unit's item id (``conversation:turn:task[:index]``)."""
    judge_id: str
    """Identity of (task program, model, settings); the resume key with ``unit_id``."""
    status: str
    """``ok``, ``parse_error``, ``lm_error``, ``refused`` or ``missing`` (never evaluated)."""
    prediction: Any = None
    """What the model answered (task-specific JSON); ``None`` on failure."""
    truth: Any = None
    """The participant's answer(s) the prediction is scored against."""
    metrics: dict[str, float | None] = Field(default_factory=dict)
    """Every metric of the unit (``None`` where undefined); empty on failure."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Task extras: presentation order of a comparison, failing stage, judge statuses."""
    error: str | None = None
    """Error text of a failed unit."""
    usage: TokenUsage = Field(default_factory=TokenUsage)
    """Tokens spent on the unit (all calls, judges included)."""
    latency_s: float | None = None
    """Wall time of the unit."""


_CORE = {"task", "turn", "prediction", "truth", "metrics"}


def record_from_judgment(
    judgment: Judgment | None,
    *,
    task: str,
    model: str,
    conversation_id: str,
    turn: int | None,
    unit_id: str,
    judge_id: str,
    truth: Any = None,
) -> TaskRecord:
    """The record of one planned unit (``judgment=None``: never evaluated, status ``missing``)."""
    unit = {
        "model": model,
        "task": task,
        "conversation_id": conversation_id,
        "turn": turn,
        "unit_id": unit_id,
        "judge_id": judge_id,
    }
    if judgment is None:
        return TaskRecord(**unit, status="missing", truth=truth)
    d = judgment.details
    return TaskRecord(
        **unit,
        status=judgment.status,
        prediction=d.get("prediction"),
        truth=d.get("truth", truth),
        metrics=dict(d.get("metrics") or {}),
        details={k: v for k, v in d.items() if k not in _CORE},
        error=judgment.error,
        usage=judgment.usage,
        latency_s=judgment.latency_s,
    )
