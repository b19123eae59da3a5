"""What each bench task measures: per metric, how one record contributes to a ratio mean
(numerator, denominator) and whether higher is better (see :mod:`._analysis`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from attune_judge.tasks._behaviour import BEHAVIOUR_TARGETS
from attune_judge.tasks._records import TaskRecord

__all__ = ["TASK_METRICS", "Row"]

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
