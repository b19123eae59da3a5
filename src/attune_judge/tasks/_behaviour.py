"""Behaviour classification: the evaluated model answers the turn's behaviour items.

For every applicable item of a turn the model answers two questions: did the original model's
reply do it (scored against the participant's ``observedBehavior``), and would the participant
want it (scored against ``preferredBehavior``). Conventions:

- **Applicability** is the data model's (``BinaryJudgement.applicable``, ATTUNEBENCH.md: both
  answers null, or either not ``na``). The model is asked every applicable item; a target is
  scored only where the participant's value is ``yes`` or ``no``.
- **Positive class** is ``yes``.
- **A missing answer (or ``na``) where the participant said yes/no is an error**: it is scored
  as the opposite of the participant's answer (a false negative for ``yes``, a false positive
  for ``no``), so skipping an item never helps.
- Per turn and pooled: accuracy, F1 (``None`` when there is no ``yes`` in truth or prediction,
  ``tp + fp + fn = 0``) and Matthews' correlation (``None`` when a margin of the confusion
  table is empty). Pooled values come from the summed confusion counts, not from averaging
  per-turn values.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BEHAVIOUR_TARGETS",
    "BehaviourTarget",
    "Confusion",
    "confusion_of",
    "score_behaviour",
]

BehaviourTarget = Literal["observed", "preferred"]
BEHAVIOUR_TARGETS: tuple[BehaviourTarget, ...] = ("observed", "preferred")
"""``observed``: did the original model do it; ``preferred``: did the participant want it."""

_ANSWERS = ("yes", "no")


@dataclass(frozen=True)
class Confusion:
    """Binary confusion counts with ``yes`` as the positive class."""

    tp: float = 0.0
    fp: float = 0.0
    fn: float = 0.0
    tn: float = 0.0

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(
            self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn
        )

    @property
    def n(self) -> float:
        """Number of scored answers."""
        return self.tp + self.fp + self.fn + self.tn

    def accuracy(self) -> float | None:
        """``(tp + tn) / n``; ``None`` for an empty table."""
        return (self.tp + self.tn) / self.n if self.n else None

    def f1(self) -> float | None:
        """``2tp / (2tp + fp + fn)``; ``None`` when ``tp + fp + fn = 0``."""
        den = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / den if self.tp + self.fp + self.fn > 0 else None

    def mcc(self) -> float | None:
        """Matthews' correlation; ``None`` when a row or column of the table is empty."""
        den = (self.tp + self.fp) * (self.tp + self.fn) * (self.tn + self.fp) * (self.tn + self.fn)
        if den <= 0:
            return None
        return (self.tp * self.tn - self.fp * self.fn) / math.sqrt(den)

    def as_dict(self) -> dict[str, float]:
        """The four counts by name."""
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


def confusion_of(pairs: Iterable[tuple[str | None, str]]) -> Confusion:
    """Confusion counts of ``(predicted, true)`` pairs; true is ``yes``/``no``.

    A predicted value other than ``yes``/``no`` (missing, ``na``) is scored as the opposite of
    the truth.
    """
    tp = fp = fn = tn = 0
    for pred, true in pairs:
        if true not in _ANSWERS:
            raise ValueError(f"true behaviour value must be yes or no, got {true!r}")
        if pred not in _ANSWERS:
            pred = "no" if true == "yes" else "yes"
        if pred == "yes":
            tp += true == "yes"
            fp += true == "no"
        else:
            fn += true == "yes"
            tn += true == "no"
    return Confusion(tp, fp, fn, tn)


def score_behaviour(
    truth: Mapping[str, tuple[str | None, str | None]],
    predicted: Mapping[str, Mapping[str, str | None]],
) -> dict[str, float | None]:
    """Per-turn metrics for both targets.

    Parameters
    ----------
    truth
        Item id -> ``(observed, preferred)`` participant values (yes / no / na / ``None``) for
        the turn's applicable items.
    predicted
        Item id -> ``{"observed": yes|no, "preferred": yes|no}`` from the evaluated model
        (missing items or keys count as errors).

    Returns
    -------
    dict
        For each target ``t`` in ``observed``, ``preferred``: ``t_accuracy``, ``t_f1``,
        ``t_mcc``, ``t_n`` and the counts ``t_tp``, ``t_fp``, ``t_fn``, ``t_tn`` (kept so
        pooled values can be recomputed from records); plus ``accuracy`` over both targets.
    """
    out: dict[str, float | None] = {}
    total = Confusion()
    for index, target in enumerate(BEHAVIOUR_TARGETS):
        pairs = []
        for item_id, values in truth.items():
            true = values[index]
            if true in _ANSWERS:
                pairs.append((predicted.get(item_id, {}).get(target), str(true)))
        conf = confusion_of(pairs)
        total = total + conf
        out[f"{target}_accuracy"] = conf.accuracy()
        out[f"{target}_f1"] = conf.f1()
        out[f"{target}_mcc"] = conf.mcc()
        out[f"{target}_n"] = conf.n
        for name, value in conf.as_dict().items():
            out[f"{target}_{name}"] = value
    out["accuracy"] = total.accuracy()
    return out
