"""One criterion's answer in a per-criterion judge: read from the text or the logprobs.

:func:`read_answer` turns the model's response to one criterion question into a score (and,
in ``expected`` mode, a :class:`ScoreDistribution`) or a ``parse_error`` with the text kept;
:func:`failed_answer` records an LM exception (evicting a failed answer from the request cache
is ``lm.evict``'s).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from attune_judge.data import TokenUsage
from attune_judge.errors import UserError
from attune_judge.judges._base import _failure, _usage
from attune_judge.judges._distribution import (
    ScoreDistribution,
    position_logprobs,
    read_distribution,
)

__all__ = [
    "CriterionAnswer",
    "failed_answer",
    "parse_level",
    "raw_text",
    "read_answer",
]

log = logging.getLogger(__name__)

ScoreMode = Literal["sampled", "expected"]


@dataclass
class CriterionAnswer:
    """One criterion's outcome: a score (and distribution), or a failure."""

    score: float | None = None
    distribution: ScoreDistribution | None = None
    text: str = ""
    status: str = "ok"
    error: str | None = None
    reason: str | None = None
    retryable: bool = False
    retry_after_s: float | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    requests: int = 1

    def fail(self, reason: str, error: str) -> None:
        """Mark the answer a ``parse_error``."""
        self.status, self.reason, self.error = "parse_error", reason, error


def read_answer(
    answer: CriterionAnswer,
    response: Any,
    *,
    criterion_id: str,
    labels: Mapping[int, Sequence[str]],
    score_mode: ScoreMode,
    max_out_of_scale: float,
    model: str,
) -> None:
    """Fill ``answer`` from ``response`` (its text, or its logprobs in ``expected`` mode).

    Raises
    ------
    UserError
        ``expected`` mode and the server returned no logprobs (it does not support them).
    """
    answer.text = str(response.text or "")
    if score_mode == "sampled":
        level = parse_level(answer.text, labels)
        if level is None:
            reason = "invalid_value" if answer.text.strip() else "empty"
            answer.fail(reason, f"{criterion_id}: answer {answer.text!r} is not one of the levels")
        else:
            answer.score = float(level)
        return
    if not response.logprobs:
        raise UserError(
            f"model {model!r} returned no token logprobs; the server does not "
            "support them: use --score-mode sampled"
        )
    position = position_logprobs(response.logprobs)
    if position is None:
        answer.fail("empty", f"{criterion_id}: empty answer (no score token)")
        return
    token, top = position
    try:
        dist = read_distribution(top, labels, answer_token=token)
    except ValueError:
        answer.fail("out_of_scale", f"{criterion_id}: no probability on the scale's tokens")
        return
    answer.distribution = dist
    if dist.out_of_scale > max_out_of_scale:
        answer.fail(
            "out_of_scale",
            f"{criterion_id}: {dist.out_of_scale:.2f} of the probability lies outside the "
            f"scale's tokens (limit {max_out_of_scale:.2f})",
        )
        return
    answer.score = dist.expected


def failed_answer(exc: Exception, tracker: Any) -> CriterionAnswer:
    """The answer of a call that raised ``exc`` (an ``lm_error``, or a ``parse_error``)."""
    outcome = _failure(exc, None)
    return CriterionAnswer(
        status=outcome.status,
        error=outcome.error,
        reason=outcome.reason,
        retryable=outcome.retryable,
        retry_after_s=outcome.retry_after_s,
        text=outcome.raw or "",
        usage=_usage(tracker, 1),
    )


_LEVEL = re.compile(r"^\s*([A-Za-z]+|\d+)\s*\.?\s*$")


def parse_level(text: str, labels: Mapping[int, Sequence[str]]) -> int | None:
    """The level a sampled answer names: exactly one level's spelling (a final period
    allowed), else ``None``.

    >>> labels = {0: ["0"], 4: ["4"], 1: ["yes"]}
    >>> parse_level("4", labels), parse_level(" 4.", labels), parse_level("Yes", labels)
    (4, 4, 1)
    >>> parse_level("4/5", labels), parse_level("4 because", labels)
    (None, None)
    """
    match = _LEVEL.match(text)
    if match is None:
        return None
    word = match.group(1).lower()
    for level, names in labels.items():
        if word in (n.lower() for n in names):
            return level
    return None


def raw_text(raw: Mapping[str, str]) -> str:
    """The answers' texts by criterion, as the judgment's ``raw_output`` (JSON)."""
    return json.dumps(raw, ensure_ascii=False)
