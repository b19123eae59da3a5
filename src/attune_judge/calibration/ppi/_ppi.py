"""Prediction-powered inference (Angelopoulos et al., Science 2023) for model means.

The judge scores every item; people label a subset. The debiased mean of model m is
``θ̂_PP = mean(judge on all items of m) + mean(human − judge on the labelled items of m)``:
the second term (the "rectifier") removes the judge's bias as measured where both exist.
Intervals come from the paired cluster bootstrap: both terms are ratio estimators over the same
clusters, re-weighted by the same draw, so their covariance is kept. The human-only mean on the
labelled subset is reported beside it for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import (
    FloatArray,
    bootstrap_weights,
    interval_endpoints,
)
from attune_judge.calibration.resampling._ratio import ClusterSums, ratio_replicates
from attune_judge.errors import UserError

__all__ = ["PPIResult", "ppi_means"]


class PPIResult(ResultModel):
    """Debiased means per model."""

    models: list[str]
    """Models (sorted)."""
    ppi: list[Metric]
    """Prediction-powered mean per model."""
    judge_only: list[Metric]
    """Mean judge score on all items (biased if the judge is)."""
    human_only: list[Metric]
    """Mean human label on the labelled subset (unbiased, wider)."""
    rectifier: list[float | None]
    """Mean (human − judge) on the labelled items: the judge's estimated bias, sign reversed."""


def _metric(
    name: str,
    est: float,
    reps: FloatArray,
    level: float,
    method: IntervalMethod,
    B: int,
    seed: int,
    n: int,
    C: int,
) -> Metric:
    e = interval_endpoints(
        est if np.isfinite(est) else None,
        reps,
        level=level,
        method="percentile" if method == "bca" else method,
    )
    return Metric(
        name=name,
        estimate=float(est) if np.isfinite(est) else None,
        **e.metric_fields(),
        level=level,
        requested_method=method,
        B=B,
        seed=seed,
        n_clusters=C,
        n=n,
    )


def ppi_means(
    models_all: Sequence[str],
    clusters_all: Sequence[object],
    judge_all: Sequence[float],
    models_labelled: Sequence[str],
    clusters_labelled: Sequence[object],
    human_labelled: Sequence[float],
    judge_labelled: Sequence[float],
    *,
    B: int = DEFAULT_B,
    level: float = 0.95,
    seed: int = 0,
    method: IntervalMethod = "percentile",
) -> PPIResult:
    """Prediction-powered means per model with paired cluster-bootstrap intervals.

    Parameters
    ----------
    models_all, clusters_all, judge_all
        Judge scores of every item (model, cluster, score).
    models_labelled, clusters_labelled, human_labelled, judge_labelled
        The items with a human label: the human value and the judge's score of the same item.
    B, level, seed, method
        Bootstrap settings (percentile intervals; BCa is not offered for the sum of two
        ratio estimators).
    """
    if not len(human_labelled) == len(judge_labelled) == len(models_labelled):
        raise UserError("labelled columns must have the same length")
    if len(human_labelled) == 0:
        raise UserError("prediction-powered inference needs some human-labelled items")
    rect = np.asarray(human_labelled, float) - np.asarray(judge_labelled, float)
    labels = [f"judge|{m}" for m in models_all] + [f"rect|{m}" for m in models_labelled]
    labels += [f"human|{m}" for m in models_labelled]
    clusters = list(clusters_all) + list(clusters_labelled) * 2
    values = np.concatenate([np.asarray(judge_all, float), rect, np.asarray(human_labelled, float)])
    sums = ClusterSums.from_long(labels, clusters, values)
    models = sorted({str(m) for m in models_all} & {str(m) for m in models_labelled})
    if not models:
        raise UserError("no model has both judge scores and human labels")
    W = bootstrap_weights(len(sums.clusters), B, seed)
    reps = ratio_replicates(sums, W)
    est = sums.estimate
    col = {lab: k for k, lab in enumerate(sums.labels)}
    C = len(sums.clusters)
    ppi, jo, ho, rc = [], [], [], []
    for m in models:
        j, r, h = col[f"judge|{m}"], col[f"rect|{m}"], col[f"human|{m}"]
        n_all, n_lab = int(sums.counts[:, j].sum()), int(sums.counts[:, r].sum())
        kw: dict[str, Any] = {"level": level, "method": method, "B": B, "seed": seed, "C": C}
        ppi.append(
            _metric(f"ppi_mean[{m}]", est[j] + est[r], reps[:, j] + reps[:, r], n=n_all, **kw)
        )
        jo.append(_metric(f"judge_mean[{m}]", est[j], reps[:, j], n=n_all, **kw))
        ho.append(_metric(f"human_mean[{m}]", est[h], reps[:, h], n=n_lab, **kw))
        rc.append(float(est[r]))
    return PPIResult(models=models, ppi=ppi, judge_only=jo, human_only=ho, rectifier=rc)
