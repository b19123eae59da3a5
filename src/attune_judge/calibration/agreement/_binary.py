"""Binary judges as practitioners check them: TPR, TNR, precision, NPV, balanced accuracy,
leniency, and the judge's pass rate corrected for its errors (Rogan–Gladen).

Pass/fail verdicts (checklist questions, behaviour items, 0/1 scores) against people's, with
"pass" (``yes``, ``1``, ``true``) the positive class:

- **TPR** (sensitivity, recall) ``TP / (TP + FN)``: of the items people pass, the share the
  judge passes; **TNR** (specificity) ``TN / (TN + FP)``; **precision** ``TP / (TP + FP)``;
  **NPV** ``TN / (TN + FN)``; **balanced accuracy** ``(TPR + TNR) / 2``; **leniency** the
  judge's pass rate minus the people's, ``(FP − FN) / n`` (> 0: the judge passes too much).

Every figure is a function of the confusion counts, so a cluster bootstrap needs only the
per-conversation counts ``K_c = (TP, FP, FN, TN)_c``: a replicate's counts are ``w @ K`` for the
cluster weights ``w`` of :func:`~attune_judge.calibration.bootstrap_weights`, and every figure
of a group is evaluated on the same weights matrix (same seed), so they are paired. Intervals
are BCa by default (the jackknife leaves one conversation out), as for κ and raw agreement.

The corrected pass rates built on these figures are in
:mod:`attune_judge.calibration.ppi._corrected`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import (
    SINGLE_CLUSTER,
    FloatArray,
    bootstrap_weights,
    interval_endpoints,
)
from attune_judge.errors import UserError

__all__ = [
    "BINARY_LABELS",
    "BINARY_METRICS",
    "BinaryAgreement",
    "binary_agreement",
    "binary_value",
    "is_binary",
]

BINARY_METRICS = ("tpr", "tnr", "precision", "npv", "balanced_accuracy", "leniency")
"""The figures of :class:`BinaryAgreement`, in the order they are shown."""

_PASS = {"yes", "pass", "passed", "true", "1", "1.0"}
_FAIL = {"no", "fail", "failed", "false", "0", "0.0"}


def binary_value(value: object) -> int | None:
    """``1`` for a pass (``yes``, ``pass``, ``true``, 1), ``0`` for a fail, else ``None``.

    >>> [binary_value(v) for v in ("yes", "No", 1, 0.0, True, "na", 0.5, None)]
    [1, 0, 1, 0, 1, None, None, None]
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return 1 if value == 1 else 0 if value == 0 else None
    if isinstance(value, str):
        v = value.strip().lower()
        return 1 if v in _PASS else 0 if v in _FAIL else None
    return None


def is_binary(values: Sequence[object]) -> bool:
    """Whether there are values and every one is a pass or a fail.

    >>> is_binary([1, 0, 1.0]), is_binary(["yes", "no"]), is_binary([1, 2]), is_binary([])
    (True, True, False, False)
    """
    return bool(values) and all(binary_value(v) is not None for v in values)


class BinaryAgreement(ResultModel):
    """A pass/fail judge against people on one group of items (an item, a criterion, all)."""

    name: str
    """What the group is (``all``, a behaviour item, a dimension)."""
    n: int
    """Items with a pass/fail verdict on both sides."""
    n_clusters: int
    """Conversations among them."""
    tp: int
    """Judge pass, people pass."""
    fp: int
    """Judge pass, people fail."""
    fn: int
    """Judge fail, people pass."""
    tn: int
    """Judge fail, people fail."""
    tpr: Metric
    """True-positive rate (sensitivity): ``TP / (TP + FN)``."""
    tnr: Metric
    """True-negative rate (specificity): ``TN / (TN + FP)``."""
    precision: Metric
    """Positive predictive value: ``TP / (TP + FP)``."""
    npv: Metric
    """Negative predictive value: ``TN / (TN + FN)``."""
    balanced_accuracy: Metric
    """``(TPR + TNR) / 2``."""
    leniency: Metric
    """Judge pass rate − people's pass rate, ``(FP − FN) / n`` (> 0: too lenient)."""
    judge_pass_rate: float
    """Share of the items the judge passes."""
    human_pass_rate: float
    """Share of the items people pass."""

    def metrics(self) -> dict[str, Metric]:
        """``figure → Metric`` in :data:`BINARY_METRICS` order."""
        return {k: getattr(self, k) for k in BINARY_METRICS}


def _counts(judge: Sequence[int], human: Sequence[int], clusters: Sequence[object]) -> Any:
    """Per-cluster confusion counts ``(C × 4)``: TP, FP, FN, TN; and the cluster ids."""
    names, ci = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    j, h = np.asarray(judge, dtype=int), np.asarray(human, dtype=int)
    cell = np.where(j == 1, np.where(h == 1, 0, 1), np.where(h == 1, 2, 3))
    K = np.zeros((len(names), 4))
    np.add.at(K, (ci, cell), 1.0)
    return K, names


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    return np.where(den > 0, out, np.nan)


def _figures(T: FloatArray) -> dict[str, FloatArray]:
    """Each figure from weighted confusion counts ``T`` (k × 4)."""
    tp, fp, fn, tn = T[:, 0], T[:, 1], T[:, 2], T[:, 3]
    tpr, tnr = _ratio(tp, tp + fn), _ratio(tn, tn + fp)
    return {
        "tpr": tpr,
        "tnr": tnr,
        "precision": _ratio(tp, tp + fp),
        "npv": _ratio(tn, tn + fn),
        "balanced_accuracy": (tpr + tnr) / 2,
        "leniency": _ratio(fp - fn, T.sum(1)),
    }


def binary_agreement(
    judge: Sequence[object],
    human: Sequence[object],
    clusters: Sequence[object] | None = None,
    *,
    name: str = "all",
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> BinaryAgreement:
    """TPR, TNR, precision, NPV, balanced accuracy and leniency of a pass/fail judge.

    Parameters
    ----------
    judge, human
        The two verdicts of each item (``yes``/``no``, ``pass``/``fail``, 1/0, booleans).
    clusters
        Conversation of each item (default: every item its own, the iid case).
    name
        The group's name in the result.
    B, level, seed, method
        Bootstrap replicates, confidence level, seed of the one weights matrix every figure is
        evaluated on, and interval method (``bca`` or ``percentile``).

    Raises
    ------
    UserError
        Columns of different lengths, no items, or a value that is not a pass or a fail.
    """
    if not len(judge) == len(human) or (clusters is not None and len(clusters) != len(judge)):
        raise UserError("judge, human and clusters must have the same length")
    if not len(judge):
        raise UserError("no items with a pass/fail verdict on both sides")
    j = [binary_value(v) for v in judge]
    h = [binary_value(v) for v in human]
    for side, vals, raw in (("judge", j, judge), ("human", h, human)):
        bad = [i for i, v in enumerate(vals) if v is None]
        if bad:
            raise UserError(
                f"{side} verdict {raw[bad[0]]!r} (row {bad[0]}) is not a pass or a fail "
                "(yes/no, pass/fail, 1/0, true/false)"
            )
    cl = list(range(len(j))) if clusters is None else list(clusters)
    K, _ = _counts(j, h, cl)  # type: ignore[arg-type]
    W = bootstrap_weights(len(K), B, seed) if len(K) >= 2 else None
    return _binary_result(name, K, W, B=B, level=level, seed=seed, method=method)


def _binary_result(
    name: str,
    K: FloatArray,
    W: FloatArray | None,
    *,
    B: int,
    level: float,
    seed: int,
    method: IntervalMethod,
) -> BinaryAgreement:
    """The figures from per-cluster counts ``K`` (C × 4) and cluster weights ``W`` (B × C;
    ``None`` with one cluster). Clusters without counts (unlabelled) change nothing."""
    total = K.sum(0)
    point = _figures(total[None, :])
    used = K.sum(1) > 0
    n, C = int(total.sum()), int(used.sum())
    reps = _figures(W @ K) if W is not None and C >= 2 else None
    jack = _figures(total[None, :] - K[used]) if method == "bca" and C >= 3 else None
    metrics = {}
    for key in BINARY_METRICS:
        est = float(point[key][0])
        base: dict[str, Any] = {"name": key, "level": level, "n": n, "n_clusters": C}
        if not np.isfinite(est):
            metrics[key] = Metric(
                **base,
                estimate=None,
                undefined_reason=_UNDEFINED[key],
                requested_method=method,
            )
        elif reps is None:
            metrics[key] = Metric(
                **base, estimate=est, requested_method=method, note=SINGLE_CLUSTER
            )
        else:
            ends = interval_endpoints(
                est,
                reps[key],
                level=level,
                method=method,
                jackknife=None if jack is None else jack[key],
            )
            metrics[key] = Metric(
                **base,
                estimate=est,
                **ends.metric_fields(),
                requested_method=method,
                B=B,
                seed=seed,
                note=ends.note,
            )
    tp, fp, fn, tn = (int(x) for x in total)
    return BinaryAgreement(
        name=name,
        n=n,
        n_clusters=C,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        **metrics,
        judge_pass_rate=(tp + fp) / n,
        human_pass_rate=(tp + fn) / n,
    )


_UNDEFINED = {
    "tpr": "no item that people pass",
    "tnr": "no item that people fail",
    "precision": "the judge passes no item",
    "npv": "the judge fails no item",
    "balanced_accuracy": "people pass every item or none",
    "leniency": "no items",
}


BINARY_LABELS = {
    "tpr": "TPR",
    "tnr": "TNR",
    "precision": "precision",
    "npv": "NPV",
    "balanced_accuracy": "balanced accuracy",
    "leniency": "leniency",
}
