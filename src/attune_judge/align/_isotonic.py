"""A monotone map from the judge's scores to the human scale, fitted by isotonic regression and
evaluated cross-fitted by conversation (no conversation is mapped by a fit that saw it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from attune_judge.judges._aligned import ScoreMap

__all__ = ["ScoreMap", "crossfit_score_map", "fit_score_map"]


def _fit_one(x: Sequence[float], y: Sequence[float]) -> tuple[list[float], list[float]]:
    from scipy.optimize import isotonic_regression

    xs = np.asarray(x, float)
    ys = np.asarray(y, float)
    ux, inv = np.unique(xs, return_inverse=True)
    counts = np.bincount(inv).astype(float)
    means = np.bincount(inv, weights=ys) / counts
    fitted = isotonic_regression(means, weights=counts, increasing=True).x
    return ux.tolist(), [float(v) for v in fitted]


def fit_score_map(
    judge: Sequence[Mapping[str, float]],
    human: Sequence[Mapping[str, float]],
    criteria: Sequence[str],
) -> ScoreMap:
    """Fit the map on pairs (judge scores, human values) per criterion (items where both exist)."""
    points: dict[str, tuple[list[float], list[float]]] = {}
    n: dict[str, int] = {}
    for c in criteria:
        pairs = [(j[c], h[c]) for j, h in zip(judge, human, strict=True) if c in j and c in h]
        if len(pairs) >= 2:
            points[c] = _fit_one([p[0] for p in pairs], [p[1] for p in pairs])
            n[c] = len(pairs)
    return ScoreMap(points=points, n=n)


def crossfit_score_map(
    judge: Sequence[Mapping[str, float]],
    human: Sequence[Mapping[str, float]],
    clusters: Sequence[str],
    criteria: Sequence[str],
    *,
    folds: int = 5,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Out-of-fold mapped scores: conversations in ``folds`` groups, each mapped by a map fitted
    on the other groups (a criterion the other groups cannot fit stays unmapped)."""
    convs = sorted(set(clusters))
    k = max(2, min(folds, len(convs)))
    order = np.random.default_rng(seed).permutation(len(convs))
    fold_of = {convs[i]: r % k for r, i in enumerate(order)}
    out: list[dict[str, float]] = [dict(j) for j in judge]
    for f in range(k):
        train = [i for i, c in enumerate(clusters) if fold_of[c] != f]
        smap = fit_score_map([judge[i] for i in train], [human[i] for i in train], criteria)
        for i, c in enumerate(clusters):
            if fold_of[c] == f:
                out[i] = smap.apply_all(judge[i])
    return out
