"""Judges that output probabilities: Brier score, expected calibration error, reliability diagram.

One implementation of each estimator; every public entry point (:func:`brier_score`,
:func:`binary_brier_score`, :func:`expected_calibration_error`, :func:`probability_scores` and
:func:`probability_calibration`) reads its forecasts through :func:`_prepare` and gives the same
number for the same forecasts. The shape of the forecasts chooses the convention:

- **A vector** ``p`` of P(y = 1) with outcomes ``y ∈ {0, 1}`` (binary): Brier score
  ``BS = mean (p − y)²`` (scikit-learn's ``brier_score_loss``); ECE over bins of ``p`` itself,
  ``ECE = Σ_b (n_b / n) |ȳ_b − p̄_b|`` with ``ȳ_b`` the observed rate of 1 (the binning of
  ``sklearn.calibration.calibration_curve``). This is the reliability-diagram reading: a judge
  that says 0.2 should be right about "no" 80% of the time.
- **An n × K matrix** of class probabilities with a class index per item (multi-class, K ≥ 2):
  Brier's (1950) multi-category score ``mean Σ_k (p_k − 1[y = k])²`` (for K = 2 it is
  ``2·BS`` of the vector form) and the top-label ECE of Guo et al. (2017): confidence = the
  largest probability, outcome = whether that class was the true one. For a yes/no forecast the
  two ECEs differ (top-label bins ``max(p, 1 − p)``, which folds "0.2 for yes" into "0.8 for
  no"): pass the vector for the binary convention, the matrix for the top-label one.

Bins are right-closed, ``(l, u]``, with 0 in the first; ``uniform`` or ``quantile`` (about
equal counts). The plug-in ECE is biased upwards in small samples: read it with its interval
and the bin counts. Murphy's (1973) ``BS = reliability − resolution + uncertainty`` uses the
same bins (the within-bin remainder is reported). :func:`probability_calibration`'s intervals
are cluster-bootstrap ones (clusters = conversations) from per-cluster bin sums.
:func:`probability_scores` leaves out human labels between levels (a median of 3.5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic
from attune_judge.errors import UserError

__all__ = [
    "ProbabilityCalibration",
    "ProbabilityScores",
    "ReliabilityBin",
    "binary_brier_score",
    "brier_score",
    "expected_calibration_error",
    "probability_calibration",
    "probability_scores",
    "reliability_diagram",
]

BinStrategy = Literal["uniform", "quantile"]


class ReliabilityBin(ResultModel):
    """One bin of a reliability diagram."""

    lower: float
    """Lower edge of the bin (exclusive, except 0 for the first bin)."""
    upper: float
    """Upper edge (inclusive)."""
    n: int
    """Forecasts in the bin."""
    mean_forecast: float | None
    """Mean forecast probability in the bin (``None`` when empty)."""
    observed_rate: float | None
    """Share of outcomes equal to 1 in the bin (``None`` when empty)."""


class ProbabilityCalibration(ResultModel):
    """Brier score, ECE and the reliability diagram of probability forecasts."""

    n: int
    """Forecasts used."""
    n_clusters: int
    """Clusters (conversations) among them."""
    kind: Literal["binary", "top_label"]
    """Binary forecasts, or multi-class forecasts read by their top label."""
    brier: Metric
    """Brier score (lower is better)."""
    ece: Metric
    """Expected calibration error over ``bins``."""
    strategy: str
    """``uniform`` or ``quantile`` bins."""
    bins: list[ReliabilityBin]
    """The reliability diagram."""
    reliability: float
    """Murphy decomposition: ``Σ_b n_b (p̄_b − ȳ_b)² / n`` (lower is better). Multi-class
    (``top_label``): each term is summed over the classes, each class's forecasts
    ``p_k`` against ``1[y = k]`` in their own bins, so that ``reliability − resolution +
    uncertainty + within_bin`` is the reported (multi-class) Brier score."""
    resolution: float
    """``Σ_b n_b (ȳ_b − ȳ)² / n`` (higher is better)."""
    uncertainty: float
    """``ȳ (1 − ȳ)`` — the Brier score of always forecasting the base rate."""
    within_bin: float
    """``brier − (reliability − resolution + uncertainty)``: the part due to spread of
    forecasts within bins (0 when every bin holds one forecast value)."""


def _prepare(
    probs: Sequence[float] | Sequence[Sequence[float]] | FloatArray,
    outcomes: Sequence[float] | Sequence[int] | FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray, Literal["binary", "top_label"]]:
    """Confidence, 0/1 outcome and per-item Brier term; checks ranges."""
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    if len(p) != len(y):
        raise UserError(f"{len(p)} forecasts but {len(y)} outcomes; they must pair up")
    if len(p) == 0:
        raise UserError("no forecasts to evaluate")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or np.any(p > 1):
        bad = np.flatnonzero(~(np.isfinite(p) & (p >= 0) & (p <= 1)).reshape(len(p), -1).all(1))
        raise UserError(f"forecast probabilities must lie in [0, 1]; bad rows {bad[:5].tolist()}")
    if p.ndim == 1:
        if not np.all(np.isin(y, (0.0, 1.0))):
            raise UserError("binary outcomes must be 0 or 1")
        return p, y, (p - y) ** 2, "binary"
    if p.ndim != 2 or p.shape[1] < 2:
        raise UserError("multi-class forecasts must be an n × K matrix with K ≥ 2")
    K = p.shape[1]
    if not np.all(np.isin(y, np.arange(K))):
        raise UserError(f"class outcomes must be integers 0..{K - 1}")
    if np.any(np.abs(p.sum(1) - 1) > 1e-6):
        raise UserError("each row of class probabilities must sum to 1")
    yi = y.astype(int)
    onehot = np.eye(K)[yi]
    conf = p.max(1)
    correct = (p.argmax(1) == yi).astype(np.float64)
    return conf, correct, np.sum((p - onehot) ** 2, 1), "top_label"


def _edges(conf: FloatArray, n_bins: int, strategy: BinStrategy) -> FloatArray:
    if n_bins < 1:
        raise UserError("n_bins must be at least 1")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy == "quantile":
        e = np.quantile(conf, np.linspace(0, 1, n_bins + 1))
        e[0], e[-1] = 0.0, 1.0
        return np.asarray(np.unique(e), dtype=np.float64)
    raise UserError(f"unknown bin strategy {strategy!r} (uniform or quantile)")


def bin_index(conf: FloatArray, edges: FloatArray) -> np.ndarray:
    """Right-closed bins ``(l, u]`` with 0 in the first (as ``calibration_curve``)."""
    return np.searchsorted(edges[1:-1], conf, side="left")


def _ece(conf: FloatArray, y: FloatArray, edges: FloatArray) -> float:
    """``Σ_b (n_b / n) |ȳ_b − p̄_b|`` over the bins ``edges`` (the point ECE)."""
    gap = np.bincount(bin_index(conf, edges), weights=y - conf, minlength=len(edges) - 1)
    return float(np.abs(gap).sum() / len(y))


def brier_score(
    probs: Sequence[float] | Sequence[Sequence[float]] | FloatArray,
    outcomes: Sequence[float] | Sequence[int] | FloatArray,
) -> float:
    """Brier score: ``mean (p − y)²`` of a vector of P(y = 1), or Brier's multi-category
    ``mean Σ_k (p_k − 1[y = k])²`` of an ``n × K`` matrix with class indices (module docstring).

    Examples
    --------
    Two items, three levels: (0.7, 0.2, 0.1) with label 0 gives 0.09 + 0.04 + 0.01 = 0.14;
    (0.2, 0.5, 0.3) with label 2 gives 0.04 + 0.25 + 0.49 = 0.78; mean 0.46.

    >>> round(brier_score([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]], [0, 2]), 10)
    0.46
    >>> round(brier_score([0.9, 0.2, 0.5], [1, 0, 0]), 10)  # (0.01 + 0.04 + 0.25) / 3
    0.1
    """
    return float(np.mean(_prepare(probs, outcomes)[2]))


def binary_brier_score(
    p_yes: Sequence[float] | FloatArray, outcomes: Sequence[int] | FloatArray
) -> float:
    """Brier score of yes-probabilities, ``mean (p − y)²``: :func:`brier_score` of a vector
    (refuses a matrix).

    >>> round(binary_brier_score([0.9, 0.2, 0.5], [1, 0, 0]), 10)
    0.1
    """
    if np.ndim(p_yes) != 1:
        raise UserError("binary_brier_score takes one probability of yes per item (a vector)")
    return brier_score(p_yes, outcomes)


def expected_calibration_error(
    probs: Sequence[float] | Sequence[Sequence[float]] | FloatArray,
    outcomes: Sequence[float] | Sequence[int] | FloatArray,
    *,
    bins: int = 10,
    strategy: BinStrategy = "uniform",
) -> float:
    """ECE over ``bins`` bins: binary convention for a vector of P(y = 1), top-label for an
    ``n × K`` matrix (module docstring); the point estimate of :func:`probability_calibration`.

    Examples
    --------
    Four items, two levels; top-label confidences 0.9, 0.9 (bin (0.8, 0.9]; one hit: acc 0.5,
    |0.5 − 0.9| = 0.4) and 0.6, 0.6 (bin (0.5, 0.6]; both hit: |1 − 0.6| = 0.4):
    ECE = 0.5 · 0.4 + 0.5 · 0.4 = 0.4.

    >>> round(expected_calibration_error(
    ...     [[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.4, 0.6]], [0, 1, 1, 1]), 10)
    0.4

    The same forecasts as P(class 1), binary convention: 0.1, 0.1 (observed 0.5: gap 0.4) and
    0.6, 0.6 (observed 1: gap 0.4); equal here, not in general (module docstring).

    >>> round(expected_calibration_error([0.1, 0.1, 0.6, 0.6], [0, 1, 1, 1]), 10)
    0.4
    """
    conf, y, _, _ = _prepare(probs, outcomes)
    return _ece(conf, y, _edges(conf, bins, strategy))


def reliability_diagram(
    probs: Sequence[float] | Sequence[Sequence[float]] | FloatArray,
    outcomes: Sequence[float] | Sequence[int] | FloatArray,
    *,
    n_bins: int = 10,
    strategy: BinStrategy = "uniform",
) -> list[ReliabilityBin]:
    """Reliability-diagram data: per bin the mean forecast, observed rate and count.

    Non-empty bins give the same ``(observed_rate, mean_forecast)`` as scikit-learn's
    ``calibration_curve(y, p, n_bins=n_bins, strategy=strategy)``.
    """
    conf, y, _, _ = _prepare(probs, outcomes)
    return _bins_from(conf, y, _edges(conf, n_bins, strategy))


def _per_cluster(
    conf: FloatArray, y: FloatArray, sq: FloatArray, idx: np.ndarray, nb: int, clusters: np.ndarray
) -> tuple[FloatArray, int]:
    """Per cluster: [count_b, Σp_b, Σy_b for each bin] + [Σ brier, n]."""
    names, ci = np.unique(clusters, return_inverse=True)
    cols = np.column_stack(
        [
            np.eye(nb)[idx],
            np.eye(nb)[idx] * conf[:, None],
            np.eye(nb)[idx] * y[:, None],
            sq,
            np.ones(len(y)),
        ]
    )
    out = np.zeros((len(names), cols.shape[1]))
    np.add.at(out, ci, cols)
    return out, len(names)


def probability_calibration(
    probs: Sequence[float] | Sequence[Sequence[float]] | FloatArray,
    outcomes: Sequence[float] | Sequence[int] | FloatArray,
    clusters: Sequence[object] | None = None,
    *,
    n_bins: int = 10,
    strategy: BinStrategy = "uniform",
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> ProbabilityCalibration:
    """Brier score and ECE with cluster-bootstrap intervals, plus the reliability diagram.

    Parameters
    ----------
    probs
        Forecast probability of outcome 1 per item (binary), or an ``n × K`` matrix of class
        probabilities (top-label reading).
    outcomes
        0/1 outcomes (binary) or class indices ``0..K-1``.
    clusters
        Cluster (conversation) of each item; default: every item is its own cluster.
    n_bins, strategy
        Bins of the ECE and the diagram (10 uniform bins by default). Quantile bin edges are
        fixed on the full data and kept in every bootstrap replicate.
    B, level, seed, method
        Bootstrap settings.

    Returns
    -------
    ProbabilityCalibration
    """
    conf, y, sq, kind = _prepare(probs, outcomes)
    cl = np.asarray([str(c) for c in (clusters if clusters is not None else range(len(y)))])
    if len(cl) != len(y):
        raise UserError(f"{len(y)} forecasts but {len(cl)} clusters")
    edges = _edges(conf, n_bins, strategy)
    nb = len(edges) - 1
    idx = bin_index(conf, edges)
    table, C = _per_cluster(conf, y, sq, idx, nb, cl)

    def ece(w: FloatArray) -> FloatArray:
        s = w @ table
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(np.abs(s[:, 2 * nb : 3 * nb] - s[:, nb : 2 * nb]).sum(1) / s[:, -1])

    def brier(w: FloatArray) -> FloatArray:
        s = w @ table
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(s[:, -2] / s[:, -1])

    kw = {"B": B, "level": level, "seed": seed, "method": method, "n": len(y)}
    bs = bootstrap_statistic(brier, C, name="brier_score", **kw)  # type: ignore[arg-type]
    ec = bootstrap_statistic(
        ece,
        C,
        name="expected_calibration_error",
        note=f"{nb} {strategy} bins; the plug-in ECE is biased upwards in small samples",
        **kw,  # type: ignore[arg-type]
    )
    bins = _bins_from(conf, y, edges)
    if kind == "binary":
        rel, res, unc = _murphy(conf, y, edges)
    else:  # the reported Brier sums over classes: so do its terms (each class's own bins)
        p = np.asarray(probs, dtype=np.float64)
        onehot = np.eye(p.shape[1])[np.asarray(outcomes, dtype=np.float64).astype(int)]
        terms = [
            _murphy(p[:, k], onehot[:, k], _edges(p[:, k], n_bins, strategy))
            for k in range(p.shape[1])
        ]
        rel, res, unc = (sum(t[i] for t in terms) for i in range(3))
    total = float(np.mean(sq))
    return ProbabilityCalibration(
        n=len(y),
        n_clusters=C,
        kind=kind,
        brier=bs,
        ece=ec,
        strategy=strategy,
        bins=bins,
        reliability=float(rel),
        resolution=float(res),
        uncertainty=float(unc),
        within_bin=total - (float(rel) - float(res) + unc),
    )


def _murphy(p: FloatArray, y: FloatArray, edges: FloatArray) -> tuple[float, float, float]:
    """Murphy's reliability, resolution and uncertainty of binary forecasts over ``edges``."""
    bins = _bins_from(p, y, edges)
    ybar = float(y.mean())
    full = [(b.n, float(b.mean_forecast or 0), float(b.observed_rate or 0)) for b in bins if b.n]
    rel = sum(n * (pf - ob) ** 2 for n, pf, ob in full) / len(y)
    res = sum(n * (ob - ybar) ** 2 for n, pf, ob in full) / len(y)
    return float(rel), float(res), ybar * (1 - ybar)


def _bins_from(conf: FloatArray, y: FloatArray, edges: FloatArray) -> list[ReliabilityBin]:
    idx = bin_index(conf, edges)
    out = []
    for b in range(len(edges) - 1):
        sel = idx == b
        n = int(sel.sum())
        out.append(
            ReliabilityBin(
                lower=float(edges[b]),
                upper=float(edges[b + 1]),
                n=n,
                mean_forecast=float(conf[sel].mean()) if n else None,
                observed_rate=float(y[sel].mean()) if n else None,
            )
        )
    return out


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
    """Brier score and ECE of per-item distributions (``{"1": p1, ...}``) against human levels
    (the multi-class reading: an ``n × K`` matrix over ``levels``)."""
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
