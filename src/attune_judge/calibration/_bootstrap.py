"""Paired cluster bootstrap: one weights matrix, per-cluster sums, all replicates in one product.

Resampling unit is the cluster (a conversation): a replicate draws cluster weights
``w ~ Multinomial(C, 1/C)`` (or Poisson(1)) and *every* model or rater is evaluated on the same
draw, so differences between models keep their covariance (a paired bootstrap). A ratio estimator
``θ*_m = Σ_c w_c S_cm / Σ_c w_c n_cm`` turns per-cluster sums into replicate means; all ``B``
replicates are the product ``(B × C) @ (C × M)``.

Intervals from the replicates (percentile, BCa, studentized) are in :mod:`._intervals` and
re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attune_judge.calibration._intervals import (
    DEGENERATE,
    MAX_UNDEFINED_SHARE,
    Endpoints,
    FloatArray,
    interval_endpoints,
    join_notes,
    studentized_endpoints,
)
from attune_judge.calibration._results import IntervalMethod, Metric

__all__ = [
    "DEGENERATE",
    "MAX_UNDEFINED_SHARE",
    "MIN_CLUSTERS",
    "ROUNDING",
    "SINGLE_CLUSTER",
    "ClusterSums",
    "Endpoints",
    "FloatArray",
    "bootstrap_statistic",
    "bootstrap_weights",
    "cluster_robust_covariance",
    "few_clusters_warning",
    "interval_endpoints",
    "iter_bootstrap_weights",
    "join_notes",
    "per_replicate",
    "ratio_replicate_variances",
    "ratio_replicates",
    "ratio_replicates_and_variances",
    "studentized_endpoints",
]

Scheme = str
# a statistic evaluated on a (k × C) matrix of cluster weights, one value per row
WeightedStatistic = Callable[[FloatArray], FloatArray]


def bootstrap_weights(
    n_clusters: int, B: int = 10_000, seed: int = 0, scheme: Scheme = "multinomial"
) -> FloatArray:
    """Draw the ``(B × C)`` cluster-weights matrix.

    Parameters
    ----------
    n_clusters
        Number of clusters ``C``.
    B
        Number of replicates.
    seed
        Seed of ``numpy.random.default_rng``; the same seed gives the same matrix.
    scheme
        ``multinomial``: each row is Multinomial(C, 1/C) (C clusters drawn with replacement);
        ``poisson``: independent Poisson(1) weights (for streaming data).

    Returns
    -------
    numpy.ndarray
        Float matrix of shape ``(B, C)``.
    """
    parts = list(iter_bootstrap_weights(n_clusters, B, seed, scheme))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def iter_bootstrap_weights(
    n_clusters: int,
    B: int = 10_000,
    seed: int = 0,
    scheme: Scheme = "multinomial",
    chunk_cells: int = 4_000_000,
) -> Iterator[FloatArray]:
    """The rows of ``bootstrap_weights`` in blocks of about ``chunk_cells`` cells.

    One generator draws the blocks in sequence, so for a given seed the rows are the same
    whatever the memory budget; use it when ``B × C`` is too large to hold at once.
    """
    if n_clusters < 1 or B < 1:
        raise ValueError("bootstrap_weights needs n_clusters >= 1 and B >= 1")
    if scheme not in ("multinomial", "poisson"):
        raise ValueError(f"unknown weight scheme {scheme!r} (multinomial or poisson)")
    rng = np.random.default_rng(seed)
    rows = max(1, chunk_cells // n_clusters)
    for start in range(0, B, rows):
        b = min(rows, B - start)
        if scheme == "poisson":
            yield rng.poisson(1.0, size=(b, n_clusters)).astype(np.float64)
        else:  # C draws with replacement per row == Multinomial(C, 1/C) counts
            yield _multinomial_counts(rng, b, n_clusters)


_COUNT_BLOCK_CELLS = 1 << 16
"""Draws counted per block: the block's draws and counts stay in the CPU cache."""


def _multinomial_counts(rng: np.random.Generator, b: int, n_clusters: int) -> FloatArray:
    """``b`` rows of Multinomial(C, 1/C) counts: C draws with replacement per row, counted.

    Drawn and counted block by block while in the cache: twice as fast as drawing all, then
    counting all, and the same matrix (an int32/int64 draw takes whole generator outputs, so
    splitting the draws changes nothing).
    """
    out = np.empty((b, n_clusters), dtype=np.float64)
    block = max(1, _COUNT_BLOCK_CELLS // n_clusters)
    small = n_clusters < 2**31 - 1
    offsets: NDArray[np.intp] = np.arange(block, dtype=np.intp)[:, None] * n_clusters
    for start in range(0, b, block):
        k = min(block, b - start)
        draws: NDArray[np.integer] = rng.integers(
            0, n_clusters, size=(k, n_clusters), dtype=np.int32 if small else np.int64
        )
        flat = np.bincount((draws + offsets[:k]).ravel(), minlength=k * n_clusters)
        out[start : start + k] = flat.reshape(k, n_clusters)
    return out


@dataclass(frozen=True)
class ClusterSums:
    """Per-cluster sums ``S`` and counts ``n`` of a long table (cluster, label, value).

    Rows are clusters sorted by id, columns labels sorted by name, so results do not depend on
    row order of the input.
    """

    clusters: list[str]
    """Cluster ids (rows)."""
    labels: list[str]
    """Labels such as model names (columns)."""
    sums: FloatArray
    """``S_cm``: sum of values of label m in cluster c, shape (C, M)."""
    counts: FloatArray
    """``n_cm``: number of values of label m in cluster c, shape (C, M)."""
    extremes: FloatArray | None = None
    """Per label: smallest and largest value, and 1.0 when every value is one of those two
    (shape (M, 3); from :meth:`from_long`, ``None`` when built from sums)."""

    @classmethod
    def from_long(
        cls,
        labels: Sequence[object],
        clusters: Sequence[object],
        values: Sequence[float] | FloatArray,
    ) -> ClusterSums:
        """Build from three equally long columns; ``NaN`` values are skipped."""
        vals = np.asarray(values, dtype=np.float64)
        lab = np.asarray([str(x) for x in labels])
        clu = np.asarray([str(x) for x in clusters])
        if not (len(vals) == len(lab) == len(clu)):
            raise ValueError("labels, clusters and values must have the same length")
        keep = ~np.isnan(vals)
        vals, lab, clu = vals[keep], lab[keep], clu[keep]
        if len(vals) == 0:
            raise ValueError("no values to bootstrap")
        label_names, li = np.unique(lab, return_inverse=True)
        cluster_names, ci = np.unique(clu, return_inverse=True)
        # a canonical summation order makes the sums bit-identical under any row order
        order = np.lexsort((vals, li, ci))
        vals, li, ci = vals[order], li[order], ci[order]
        C, M = len(cluster_names), len(label_names)
        flat = ci * M + li
        sums = np.bincount(flat, weights=vals, minlength=C * M).reshape(C, M).astype(np.float64)
        counts = np.bincount(flat, minlength=C * M).reshape(C, M).astype(np.float64)
        lo, hi = np.full(M, np.inf), np.full(M, -np.inf)
        np.minimum.at(lo, li, vals)
        np.maximum.at(hi, li, vals)
        other = np.zeros(M)
        np.add.at(other, li, ((vals != lo[li]) & (vals != hi[li])).astype(np.float64))
        extremes = np.column_stack([lo, hi, (other == 0).astype(np.float64)])
        labels_out = [str(m) for m in label_names]
        return cls([str(c) for c in cluster_names], labels_out, sums, counts, extremes)

    @property
    def estimate(self) -> FloatArray:
        """Overall mean per label, ``Σ_c S_cm / Σ_c n_cm``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.sums.sum(0) / self.counts.sum(0), dtype=np.float64)

    def jackknife(self) -> FloatArray:
        """Leave-one-cluster-out ratio estimates, shape (C, M); NaN where undefined."""
        num = self.sums.sum(0)[None, :] - self.sums
        den = self.counts.sum(0)[None, :] - self.counts
        with np.errstate(invalid="ignore", divide="ignore"):
            out = num / den
        out[den <= 0] = np.nan
        return np.asarray(out, dtype=np.float64)


ROUNDING = 1e-10
"""Relative size below which an expanded sum of squares is rounding noise (treated as 0)."""

SINGLE_CLUSTER = (
    "no interval: a single conversation (cluster); resampling it always gives the same value"
)
"""Note of a statistic computed from one cluster (an estimate, never an interval)."""

MIN_CLUSTERS = 10
"""Fewest clusters (conversations) for which intervals and rank claims are supported.

Seeded simulations (``tests/calibration/test_coverage.py``; numbers in STATISTICS notes of the
README) show the default interval for means — the symmetric studentized cluster bootstrap —
covering 93–97% at 10 and 15 clusters, and percentile/BCa intervals 87–91% there. Below
``MIN_CLUSTERS`` no method was validated: every command warns, and rank claims (rank sets,
tiers) are refused."""


def few_clusters_warning(n_clusters: int, what: str = "conversations") -> str | None:
    """The warning printed below :data:`MIN_CLUSTERS` clusters, else ``None``."""
    if n_clusters >= MIN_CLUSTERS:
        return None
    return (
        f"only {n_clusters} {what} (clusters): intervals are unreliable below {MIN_CLUSTERS} "
        "(their coverage was validated from 10 up) and no rank claims are made"
    )


def ratio_replicate_variances(
    sums: ClusterSums, weights: FloatArray, reps: FloatArray | None = None
) -> FloatArray:
    """Cluster-robust variance of each replicate's ratio estimate, shape (B, M).

    For replicate weights w: ``Σ_c w_c (S_cm − θ*_m n_cm)² / (Σ_c w_c n_cm)² · C/(C−1)``
    (each drawn copy of a cluster counts as a cluster). At ``w = 1`` this is the diagonal of
    :func:`cluster_robust_covariance`. One matrix product, no per-replicate loop.
    """
    if reps is None:
        return ratio_replicates_and_variances(sums, weights)[1]
    S, n = sums.sums, sums.counts
    P = weights @ np.hstack([n, S * S, S * n, n * n])
    return _variances(sums, reps, P[:, : S.shape[1]], P[:, S.shape[1] :])


def ratio_replicates(sums: ClusterSums, weights: FloatArray) -> FloatArray:
    """All replicates of the ratio estimator: ``(W @ S) / (W @ n)``, shape (B, M).

    A replicate in which a label has no observation is NaN for that label.
    """
    M = sums.sums.shape[1]
    P = weights @ np.hstack([sums.sums, sums.counts])  # one product: same values as two
    return _ratio(P[:, :M], P[:, M:])


def ratio_replicates_and_variances(
    sums: ClusterSums, weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """:func:`ratio_replicates` and :func:`ratio_replicate_variances` from one matrix product
    ``W @ [S, n, S², S·n, n²]`` (each column the same as its own product)."""
    M = sums.sums.shape[1]
    S, n = sums.sums, sums.counts
    P = weights @ np.hstack([S, n, S * S, S * n, n * n])
    reps = _ratio(P[:, :M], P[:, M : 2 * M])
    return reps, _variances(sums, reps, P[:, M : 2 * M], P[:, 2 * M :])


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[den <= 0] = np.nan
    return np.asarray(out, dtype=np.float64)


def _variances(sums: ClusterSums, reps: FloatArray, den: FloatArray, sq: FloatArray) -> FloatArray:
    """The variances from ``den = W @ n`` and ``sq = W @ [S², S·n, n²]``."""
    C, M = sums.sums.shape
    ss, sn, nn = sq[:, :M], sq[:, M : 2 * M], sq[:, 2 * M :]
    with np.errstate(invalid="ignore", divide="ignore"):
        c = reps**2 * nn
        v = ss - 2 * reps * sn + c
        # the expanded sum cancels: a replicate without spread gives rounding noise (1e-17),
        # not 0, and a huge finite t*; below rounding relative to the terms it is 0
        v[np.abs(v) <= ROUNDING * (ss + c)] = 0.0
        v = v / den**2 * (C / max(C - 1, 1))
    v[den <= 0] = np.nan
    return np.asarray(np.clip(v, 0, None), dtype=np.float64)


def cluster_robust_covariance(sums: ClusterSums) -> FloatArray:
    """Closed-form cluster-robust covariance of the label means, ``Σ̂ = UᵀU / (C(C−1))``.

    With ``u_cm = (S_cm − θ̂_m n_cm) / n̄_m`` (``n̄_m`` the mean count per cluster). It
    approximates the bootstrap covariance of the ratio estimator (which is ``UᵀU / C²``
    asymptotically) and is the covariance fed to confidence sets for ranks. The row and
    column of a label with no observations are NaN.
    """
    C = len(sums.clusters)
    if C < 2:
        raise ValueError("the cluster-robust covariance needs at least two clusters")
    theta = sums.estimate
    nbar = sums.counts.mean(0)
    observed = nbar > 0
    U = np.full(sums.sums.shape, np.nan)
    U[:, observed] = (
        sums.sums[:, observed] - theta[None, observed] * sums.counts[:, observed]
    ) / nbar[None, observed]
    return np.asarray(U.T @ U / (C * (C - 1)), dtype=np.float64)


def _evaluate(stat: WeightedStatistic, weights: FloatArray, batch: int) -> FloatArray:
    """Evaluate a weighted statistic over the rows of ``weights`` in batches."""
    parts = [
        np.asarray(stat(weights[i : i + batch]), dtype=np.float64).reshape(-1)
        for i in range(0, len(weights), batch)
    ]
    return np.concatenate(parts) if parts else np.empty(0)


def bootstrap_statistic(
    stat: WeightedStatistic,
    n_clusters: int,
    *,
    name: str,
    B: int = 2_000,
    level: float = 0.95,
    seed: int = 0,
    scheme: Scheme = "multinomial",
    method: IntervalMethod = "bca",
    n: int = 0,
    batch: int = 500,
    engine: str = "vectorised",
    note: str | None = None,
) -> Metric:
    """Cluster bootstrap of any statistic written as a function of cluster weights.

    Parameters
    ----------
    stat
        Function mapping a ``(k × C)`` weights matrix to ``k`` values (NaN = undefined). The
        point estimate is ``stat(ones((1, C)))``; leave-one-cluster-out rows give the
        jackknife used by BCa.
    n_clusters
        Number of clusters ``C``.
    name, n, engine, note
        Copied into the result.
    B, level, seed, scheme, method
        Number of replicates, confidence level, seed, weight scheme, interval method.
    batch
        Replicates evaluated per call (bounds memory).

    Returns
    -------
    Metric
        Estimate, interval, method used, Monte-Carlo errors.
    """
    if n_clusters < 1:
        return Metric(name=name, estimate=None, undefined_reason="no clusters")
    point = float(_evaluate(stat, np.ones((1, n_clusters)), batch)[0])
    if not np.isfinite(point):
        return Metric(
            name=name,
            estimate=None,
            undefined_reason="the statistic is undefined on these data",
            n_clusters=n_clusters,
            n=n,
            requested_method=method,
        )
    if n_clusters < 2:
        return Metric(
            name=name,
            estimate=point,
            requested_method=method,
            n_clusters=n_clusters,
            n=n,
            note=join_notes(note, SINGLE_CLUSTER),
        )
    reps = np.concatenate(
        [
            _evaluate(stat, W, batch)
            for W in iter_bootstrap_weights(n_clusters, B, seed, scheme, max(batch, 1) * n_clusters)
        ]
    )
    jack = None
    if method == "bca" and n_clusters >= 3:
        jack = np.concatenate(
            [
                _evaluate(stat, _leave_one_out(n_clusters, i, min(i + batch, n_clusters)), batch)
                for i in range(0, n_clusters, batch)
            ]
        )
    ends = interval_endpoints(point, reps, level=level, method=method, jackknife=jack)
    return Metric(
        name=name,
        estimate=point,
        lower=ends.lower,
        upper=ends.upper,
        level=level,
        method=ends.method,
        requested_method=method,
        B=B,
        seed=seed,
        scheme="poisson" if scheme == "poisson" else "multinomial",
        n_clusters=n_clusters,
        n=n,
        mc_error_lower=ends.mc_error_lower,
        mc_error_upper=ends.mc_error_upper,
        n_undefined_replicates=ends.n_undefined,
        engine="loop" if engine == "loop" else "vectorised",
        note=join_notes(note, ends.note),
    )


def _leave_one_out(n_clusters: int, start: int, stop: int) -> FloatArray:
    """Rows ``start..stop`` of the leave-one-cluster-out weights ``1 − I``."""
    w = np.ones((stop - start, n_clusters))
    w[np.arange(stop - start), np.arange(start, stop)] = 0.0
    return w


def per_replicate(fn: Callable[[FloatArray], float]) -> WeightedStatistic:
    """Wrap a statistic of one weights vector into a (slow) loop over replicate rows."""

    def stat(weights: FloatArray) -> FloatArray:
        return np.array([fn(w) for w in weights], dtype=np.float64)

    return stat
