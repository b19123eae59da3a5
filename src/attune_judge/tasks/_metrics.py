"""What each bench task measures: per metric, how one record contributes to a ratio mean
(numerator, denominator) and whether higher is better (see :mod:`._analysis`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from attune_judge.tasks._behaviour import BEHAVIOUR_TARGETS
from attune_judge.tasks._records import TaskRecord

__all__ = ["METRIC_BOUNDS", "TASK_METRICS", "Row"]

Row = tuple[str, str, float, float]  # model, conversation, numerator, denominator
Extractor = Callable[[TaskRecord], tuple[float, float] | None]


def _mean_of(name: str) -> Extractor:
    def get(r: TaskRecord) -> tuple[float, float] | None:
        v = r.metrics.get(name)
        return None if v is None or not math.isfinite(v) else (float(v), 1.0)

    return get


def _pooled(name: str, n_name: str) -> Extractor:
    def get(r: TaskRecord) -> tuple[float, float] | None:
        v, n = r.metrics.get(name), r.metrics.get(n_name)
        return None if v is None or not n else (float(v) * float(n), float(n))

    return get


def _behaviour_correct(targets: Sequence[str]) -> Extractor:
    def get(r: TaskRecord) -> tuple[float, float] | None:
        m = r.metrics
        num = sum(float(m.get(f"{t}_tp") or 0) + float(m.get(f"{t}_tn") or 0) for t in targets)
        den = sum(float(m.get(f"{t}_n") or 0) for t in targets)
        return (num, den) if den > 0 else None

    return get


TASK_METRICS: dict[str, dict[str, tuple[Extractor, bool]]] = {
    "drafting": {
        "judge_score": (_mean_of("judge_score"), True),
        "alignment": (_pooled("alignment", "alignment_n"), True),
    },
    "emotion": {
        name: (_mean_of(name), name != "intensity_mae")
        for name in ("f1", "precision", "recall", "va_similarity", "exact_match", "intensity_mae")
    },
    "behaviour": {
        "accuracy": (_behaviour_correct(BEHAVIOUR_TARGETS), True),
        **{f"{t}_accuracy": (_behaviour_correct([t]), True) for t in BEHAVIOUR_TARGETS},
    },
    "preference": {"accuracy": (_mean_of("accuracy"), True)},
    "conversation": {
        name: (_mean_of(name), name in ("composite", "q1_f1", "q2_exact", "q3_exact"))
        for name in (
            "composite",
            "panas_item_mae",
            "panas_pa_abs_error",
            "panas_na_abs_error",
            "q1_f1",
            "q2_exact",
            "q3_exact",
            "q3_distance",
            "four_branch_mae",
        )
    },
}
"""Per task: metric -> (how a record contributes ``(numerator, denominator)``, higher is better).
The first metric of each task is its primary (ranking) metric."""

_UNIT = (0.0, 1.0)
METRIC_BOUNDS: dict[str, tuple[float, float]] = {
    **dict.fromkeys(
        ("judge_score", "alignment", "f1", "precision", "recall", "exact_match", "accuracy"),
        _UNIT,
    ),
    **{f"{t}_accuracy": _UNIT for t in BEHAVIOUR_TARGETS},
    **dict.fromkeys(("composite", "q1_f1", "q2_exact", "q3_exact"), _UNIT),
    "q3_distance": (0.0, 3.0),
    "panas_item_mae": (0.0, 6.0),
    "four_branch_mae": (0.0, 6.0),
}
"""The range each metric lies in, by its definition (proportions, F1 and the 0..1 composite;
distances on the 0-3 and 1-7 scales): its intervals are kept on it (bounded intervals of
:func:`~attune_judge.calibration.paired_cluster_bootstrap`). Not listed, so unbounded:
``va_similarity`` (negative beyond distance sqrt 2), ``intensity_mae`` and the PANAS sum errors."""
