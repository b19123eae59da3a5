"""How close a judge's scores are to the people's: the metric the optimizer maximises and the
held-out proof reports (one number per item, in [0, 1], 1 = the people's scores exactly)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal

from attune_judge.rubrics import Rubric

__all__ = [
    "PREFERENCE_METRICS",
    "RATING_METRICS",
    "MetricKind",
    "MetricLog",
    "item_agreement",
    "make_dspy_metric",
    "make_verdict_metric",
    "verdict_agreement",
]

MetricKind = Literal["ordinal", "quadratic", "exact", "half"]
"""Ratings: ``ordinal``: 1 − |judge − human| / (max − min), averaged over criteria;
``quadratic``: 1 − ((judge − human) / (max − min))²; ``exact``: share of criteria where the
judge gives the human mean rounded to the scale. Preferences: ``exact``: 1 when the judge's
verdict (A / B / tie) is the people's, else 0; ``half``: the same, but a tie against a winner
counts ½. A pair judged ``inconsistent`` (opposite winners in the two orders) counts 0."""

PREFERENCE_METRICS = ("exact", "half")
RATING_METRICS = ("ordinal", "quadratic", "exact")


def verdict_agreement(judge: str, human: str, kind: MetricKind = "exact") -> float:
    """Agreement of one pairwise verdict with the people's choice.

    >>> verdict_agreement("A", "A"), verdict_agreement("tie", "B")
    (1.0, 0.0)
    >>> verdict_agreement("tie", "B", "half"), verdict_agreement("B", "tie", "half")
    (0.5, 0.5)
    >>> verdict_agreement("inconsistent", "tie", "half"), verdict_agreement("A", "B", "half")
    (0.0, 0.0)
    """
    if judge == human:
        return 1.0
    if kind == "half" and judge in ("A", "B", "tie") and "tie" in (judge, human):
        return 0.5
    return 0.0


def item_agreement(
    judge: Mapping[str, float],
    human: Mapping[str, float],
    rubric: Rubric,
    kind: MetricKind = "ordinal",
) -> float | None:
    """Agreement of one item's judge scores with the human values (criteria both have)."""
    vals = []
    for c, h in human.items():
        if c not in judge:
            continue
        scale = rubric.scale_of(c)
        span = float(scale.max - scale.min)
        d = (float(judge[c]) - float(h)) / span
        if kind == "ordinal":
            vals.append(1.0 - abs(d))
        elif kind == "quadratic":
            vals.append(1.0 - d * d)
        else:
            vals.append(float(round(float(judge[c])) == _nearest(h, scale.levels)))
    return sum(vals) / len(vals) if vals else None


def _nearest(value: float, levels: list[int]) -> int:
    return min(levels, key=lambda v: (abs(v - value), v))


class MetricLog:
    """The item ids every metric call was made on (thread-safe): for the leakage check."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.item_ids: list[str] = []

    def add(self, item_id: str) -> None:
        with self._lock:
            self.item_ids.append(item_id)

    @property
    def calls(self) -> int:
        return len(self.item_ids)


def _dspy_metric(
    grade: Callable[[Any, Any], tuple[float, Callable[[], str]]],
    threshold: float,
    log: MetricLog | None,
) -> Callable[..., Any]:
    """The DSPy calling conventions around ``grade(example, prediction) → (value, feedback)``:
    the value; while bootstrapping (``trace`` given) whether it reaches ``threshold``; for
    GEPA (``pred_name`` given) a ``dspy.Prediction(score, feedback)``."""

    def metric(
        example: Any,
        prediction: Any,
        trace: Any = None,
        pred_name: Any = None,
        pred_trace: Any = None,
    ) -> Any:
        if log is not None:
            log.add(str(example.get("item_id")))
        value, feedback = grade(example, prediction)
        if pred_name is not None:
            import dspy

            return dspy.Prediction(score=value, feedback=feedback())
        if trace is not None:
            return value >= threshold
        return value

    return metric


def make_dspy_metric(
    rubric: Rubric,
    kind: MetricKind = "ordinal",
    *,
    threshold: float = 0.9,
    log: MetricLog | None = None,
) -> Callable[..., Any]:
    """A DSPy metric ``(example, prediction, trace=None, pred_name=None, pred_trace=None)``.

    Returns the agreement (a float); while bootstrapping demonstrations (``trace`` given) it
    returns whether the agreement reaches ``threshold``; for GEPA (``pred_name`` given) a
    ``dspy.Prediction(score, feedback)`` naming the criteria the judge got wrong.
    """
    criteria = [c.id for c in rubric.criteria]

    def grade(example: Any, prediction: Any) -> tuple[float, Callable[[], str]]:
        human: dict[str, float] = dict(example.get("human_scores") or {})
        judged = {}
        for c in criteria:
            v = prediction.get(c) if hasattr(prediction, "get") else getattr(prediction, c, None)
            if v is not None:
                try:
                    judged[c] = float(v)
                except (TypeError, ValueError):
                    continue
        score = item_agreement(judged, human, rubric, kind)

        def feedback() -> str:
            wrong = [
                f"{c}: the people gave {human[c]:.2f}, the judge {judged.get(c)}"
                for c in human
                if c in criteria and judged.get(c) is not None and abs(judged[c] - human[c]) >= 0.5
            ]
            return (
                "Off from the people: " + "; ".join(wrong) if wrong else "Scores match the people."
            )

        return 0.0 if score is None else score, feedback

    return _dspy_metric(grade, threshold, log)


def make_verdict_metric(
    kind: MetricKind = "exact",
    *,
    threshold: float = 0.9,
    log: MetricLog | None = None,
) -> Callable[..., Any]:
    """The DSPy metric of a pairwise judge's one-order program: its ``verdict`` against the
    example's ``verdict`` (the people's choice in that order), by :func:`verdict_agreement`.
    Same calling conventions as :func:`make_dspy_metric` (bootstrapping, GEPA feedback)."""

    def grade(example: Any, prediction: Any) -> tuple[float, Callable[[], str]]:
        human = str(example.get("verdict"))
        got = prediction.get("verdict") if hasattr(prediction, "get") else None
        got = str(got if got is not None else getattr(prediction, "verdict", ""))
        value = verdict_agreement(got, human, kind)
        if value == 1.0:
            return value, lambda: "The verdict matches the people's choice."
        return value, lambda: f"The people chose {human}; the judge said {got}."

    return _dspy_metric(grade, threshold, log)
