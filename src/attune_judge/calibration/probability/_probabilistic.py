"""How good are a judge's probabilities? Brier score and expected calibration error.

A judge that reports a distribution over a scale's levels (``--score-mode expected``) or a
probability of yes (a checklist question) can be scored as a forecaster of the human label:

- :func:`brier_score`: the mean over items of ``Σ_k (p_k − 1[y = k])²`` (Brier 1950, the
  original multi-category form; for a yes/no question with ``p`` = P(yes) it is twice the
  familiar ``(p − y)²``, so :func:`binary_brier_score` gives that one). 0 is perfect; a
  uniform forecast over ``K`` levels scores ``1 − 1/K``.
- :func:`expected_calibration_error`: items binned by the forecast's confidence in its most
  probable level (``bins`` equal-width bins over [0, 1]); ECE = ``Σ_b (n_b / n) |acc_b −
  conf_b|`` with ``acc_b`` the share of items in the bin whose label is that level and
  ``conf_b`` their mean confidence (Naeini et al. 2015; Guo et al. 2017).

Ordinal human labels that are medians of several raters may fall between levels (3.5): such an
item is left out (an exact level is needed for a probability forecast); the count is reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from attune_judge.calibration._results import ResultModel
from attune_judge.calibration.probability._probability import bin_index

__all__ = [
    "ProbabilityScores",
    "binary_brier_score",
    "brier_score",
    "expected_calibration_error",
    "probability_scores",
]


def _check(probs: np.ndarray, labels: np.ndarray) -> None:
    if probs.ndim != 2 or len(probs) != len(labels) or len(labels) == 0:
        raise ValueError("need one distribution (row) and one label per item")
    if np.any(probs < 0) or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("each distribution must be non-negative and sum to 1")
    if np.any(labels < 0) or np.any(labels >= probs.shape[1]):
        raise ValueError("labels must index the distribution's levels")


def brier_score(probs: Sequence[Sequence[float]], labels: Sequence[int]) -> float:
    """Multi-category Brier score: mean of ``Σ_k (p_k − 1[y = k])²``.

    Parameters
    ----------
    probs
        One distribution over the ``K`` levels per item (rows sum to 1).
    labels
        The observed level of each item, as an index ``0..K-1``.

    Examples
    --------
    Two items, three levels: (0.7, 0.2, 0.1) with label 0 gives 0.09 + 0.04 + 0.01 = 0.14;
    (0.2, 0.5, 0.3) with label 2 gives 0.04 + 0.25 + 0.49 = 0.78; mean 0.46.

    >>> round(brier_score([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]], [0, 2]), 10)
    0.46
    """
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    _check(p, y)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(y)), y] = 1.0
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))


def binary_brier_score(p_yes: Sequence[float], outcomes: Sequence[int]) -> float:
    """Brier score of yes-probabilities: mean of ``(p − y)²`` (``y`` 1 = yes, 0 = no).

    >>> round(binary_brier_score([0.9, 0.2, 0.5], [1, 0, 0]), 10)  # (0.01 + 0.04 + 0.25) / 3
    0.1
    """
    p = np.asarray(p_yes, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    if len(p) != len(y) or len(p) == 0:
        raise ValueError("need one probability and one outcome per item")
    if np.any((p < 0) | (p > 1)) or np.any((y != 0) & (y != 1)):
        raise ValueError("probabilities lie in [0, 1]; outcomes are 0 or 1")
    return float(np.mean((p - y) ** 2))


def expected_calibration_error(
    probs: Sequence[Sequence[float]], labels: Sequence[int], *, bins: int = 10
) -> float:
    """Top-label ECE with ``bins`` equal-width confidence bins, right-closed ``(l, u]`` with 0
    in the first — the bins of :func:`probability_calibration` (and of scikit-learn's
    ``calibration_curve``), so a confidence on an edge lands in the same bin in both.

    Examples
    --------
    Four items, two levels; confidences 0.9, 0.9 (bin (0.8, 0.9]; one hit: acc 0.5,
    |0.5 − 0.9| = 0.4) and 0.6, 0.6 (bin (0.5, 0.6]; both hit: |1 − 0.6| = 0.4):
    ECE = 0.5 · 0.4 + 0.5 · 0.4 = 0.4.

    >>> round(expected_calibration_error(
    ...     [[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.4, 0.6]], [0, 1, 1, 1]), 10)
    0.4
    """
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    _check(p, y)
    if bins < 1:
        raise ValueError("bins must be at least 1")
    conf = p.max(axis=1)
    hit = (p.argmax(axis=1) == y).astype(np.float64)
    index = bin_index(conf, np.linspace(0.0, 1.0, bins + 1))
    total = 0.0
    for b in range(bins):
        mask = index == b
        if mask.any():
            total += mask.mean() * abs(hit[mask].mean() - conf[mask].mean())
    return float(total)


class ProbabilityScores(ResultModel):
    """Brier score and ECE of a judge's distributions against human levels."""

    n: int
    """Items scored (those with an exact level as the human label)."""
    n_skipped: int
    """Items left out: no distribution, or a human label between levels (a median of 3.5)."""
    brier: float | None
    """Multi-category Brier score (0 = perfect; uniform over K levels: 1 − 1/K)."""
    ece: float | None
    """Top-label expected calibration error (10 equal-width bins)."""


def probability_scores(
    distributions: Sequence[Mapping[str, float] | None],
    human: Sequence[float | None],
    levels: Sequence[int],
    *,
    bins: int = 10,
) -> ProbabilityScores:
    """Brier score and ECE of per-item distributions (``{"1": p1, ...}``) against human levels."""
    rows, labels, skipped = [], [], 0
    for dist, label in zip(distributions, human, strict=True):
        if dist is None or label is None or float(label) not in {float(v) for v in levels}:
            skipped += 1
            continue
        rows.append([float(dist.get(str(level), 0.0)) for level in levels])
        labels.append(list(levels).index(int(label)))
    if not rows:
        return ProbabilityScores(n=0, n_skipped=skipped, brier=None, ece=None)
    return ProbabilityScores(
        n=len(rows),
        n_skipped=skipped,
        brier=brier_score(rows, labels),
        ece=expected_calibration_error(rows, labels, bins=bins),
    )
