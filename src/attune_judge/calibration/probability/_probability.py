"""Judges that output probabilities: Brier score, expected calibration error, reliability diagram.

Binary outcomes ``y ∈ {0, 1}`` with forecast probabilities ``p`` of ``y = 1``:

- **Brier score** ``BS = mean (p − y)²`` (the binary form used by scikit-learn's
  ``brier_score_loss``; Brier's 1950 definition sums over both classes and is ``2·BS``). Lower is
  better; 0.25 is the score of always forecasting 0.5. Murphy's (1973) decomposition
  ``BS = reliability − resolution + uncertainty`` is computed over the same bins as the ECE (it is
  exact only when the forecasts within a bin are equal; the within-bin remainder is reported).
- **Expected calibration error** (Guo et al. 2017; Naeini et al. 2015):
  ``ECE = Σ_b (n_b / n) |ȳ_b − p̄_b|`` over ``n_bins`` bins of the forecast, ``ȳ_b`` the observed
  rate and ``p̄_b`` the mean forecast in bin b. Bins are right-closed, ``(l, u]``, with 0 in the
  first (the binning of ``sklearn.calibration.calibration_curve``); ``uniform`` bins split [0, 1]
  into equal widths, ``quantile`` bins hold about equal numbers of forecasts. The plug-in ECE is
  biased upwards in small samples (even a perfectly calibrated judge scores > 0); read it with its
  interval and the bin counts.
- **Reliability diagram**: per bin, the mean forecast, the observed rate and the count.

Multi-class forecasts (an ``n × K`` matrix of class probabilities and a class index per item) use
the top-label convention of Guo et al.: confidence = the largest probability, outcome = whether
that class was the true one; the Brier score is then the multi-class mean of
``Σ_k (p_k − 1[y = k])²``.

Every figure has a cluster-bootstrap interval (clusters = conversations), computed from per-cluster
bin sums, so all replicates are one matrix product.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic
from attune_judge.errors import UserError

__all__ = [
    "ProbabilityCalibration",
    "ReliabilityBin",
    "bin_index",
    "probability_calibration",
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
    level: float = 0.95,
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
