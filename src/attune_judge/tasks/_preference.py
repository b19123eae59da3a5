"""Preference prediction: which of two responses did the participant choose?

The evaluated model sees the two responses as ``Response 1`` and ``Response 2`` — the
AttuneBench labels (original / alternate / human) are never shown — in an order drawn from a
seeded generator per comparison. Its answer is mapped back to the data's A/B before scoring,
so a position bias of the model cannot line up with the data's own A/B order.

Metrics: accuracy over the comparisons with a participant answer, and Kendall's τ-b between
the win counts of the three responses (original, alternate, human) under the participant's
choices and under the model's predicted choices (``None`` when either count vector is
constant, where τ is undefined).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "RESPONSE_LABELS",
    "PresentedComparison",
    "kendall_tau_b",
    "present_comparison",
    "score_preferences",
    "win_counts",
]

RESPONSE_LABELS: tuple[str, ...] = ("original", "alternate", "human")
"""The three responses of a turn, in a fixed order for win-count vectors."""

Choice = Literal["A", "B"]


@dataclass(frozen=True)
class PresentedComparison:
    """How one comparison is shown to the evaluated model."""

    swapped: bool
    """``True`` when the data's response B is shown first (as ``Response 1``)."""

    def to_data(self, shown: Literal["1", "2"] | None) -> Choice | None:
        """Map the model's ``1``/``2`` answer back to the data's ``A``/``B``."""
        if shown not in ("1", "2"):
            return None
        first_is_a = not self.swapped
        if shown == "1":
            return "A" if first_is_a else "B"
        return "B" if first_is_a else "A"


def present_comparison(seed: int, *key: object) -> PresentedComparison:
    """The order of one comparison: a coin flip seeded by ``seed`` and the comparison's key.

    The flip depends only on ``(seed, key)`` (a SHA-256 seed for ``random.Random``), so it is
    the same on resume, on another machine and for every evaluated model, and is recorded by
    recording the seed.
    """
    text = ":".join([str(seed), *map(str, key)])
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    return PresentedComparison(swapped=rng.random() < 0.5)


def win_counts(
    comparisons: Iterable[tuple[str, str, Choice | None]],
    labels: Sequence[str] = RESPONSE_LABELS,
) -> list[float]:
    """Wins per label from ``(label_a, label_b, winner)`` triples (``None`` winners skipped)."""
    counts = dict.fromkeys(labels, 0.0)
    for a, b, winner in comparisons:
        if winner == "A" and a in counts:
            counts[a] += 1
        elif winner == "B" and b in counts:
            counts[b] += 1
    return [counts[label] for label in labels]


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b (``scipy.stats.kendalltau``); ``None`` when undefined (a constant side).

    >>> kendall_tau_b([2, 1, 0], [2, 1, 0])
    1.0
    >>> kendall_tau_b([1, 1, 1], [2, 1, 0]) is None
    True
    """
    from scipy.stats import kendalltau

    if len(set(x)) < 2 or len(set(y)) < 2:
        return None
    return float(kendalltau(x, y).statistic)


def score_preferences(
    comparisons: Sequence[tuple[str, str, Choice]],
    predicted: Sequence[Choice | None],
) -> dict[str, float | None]:
    """Accuracy and win-count τ for the answered comparisons of one turn (or conversation).

    Parameters
    ----------
    comparisons
        ``(label_a, label_b, participant_winner)`` per comparison (answered ones only).
    predicted
        The model's choice per comparison in the data's A/B terms (``None`` = no valid answer,
        counted as wrong).

    Returns
    -------
    dict
        ``accuracy`` (``None`` without comparisons), ``n``, ``n_correct``, ``tau_win_counts``.
    """
    if len(comparisons) != len(predicted):
        raise ValueError("one prediction per comparison is needed")
    n = len(comparisons)
    correct = sum(1 for (_, _, w), p in zip(comparisons, predicted, strict=True) if p == w)
    true_wins = win_counts(comparisons)
    pred_wins = win_counts((a, b, p) for (a, b, _), p in zip(comparisons, predicted, strict=True))
    return {
        "accuracy": correct / n if n else None,
        "n": float(n),
        "n_correct": float(correct),
        "tau_win_counts": kendall_tau_b(pred_wins, true_wins),
    }
