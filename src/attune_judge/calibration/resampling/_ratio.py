"""The ratio estimator of the paired cluster bootstrap: replicate means, their cluster-robust
variances and the closed-form covariance, each from one matrix product of the weights and the
per-cluster sums (:class:`ClusterSums`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attune_judge.calibration.resampling._intervals import FloatArray

__all__ = [
    "ROUNDING",
    "ClusterSums",
    "cluster_robust_covariance",
    "ratio",
    "ratio_replicate_variances",
    "ratio_replicates",
    "ratio_replicates_and_variances",
]

ROUNDING = 1e-10
"""Relative size below which an expanded sum of squares is rounding noise (treated as 0)."""


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
        return ratio(
            self.sums.sum(0)[None, :] - self.sums, self.counts.sum(0)[None, :] - self.counts
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
    return ratio(P[:, :M], P[:, M:])


def ratio_replicates_and_variances(
    sums: ClusterSums, weights: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """:func:`ratio_replicates` and :func:`ratio_replicate_variances` from one matrix product
    ``W @ [S, n, S², S·n, n²]`` (each column the same as its own product)."""
    M = sums.sums.shape[1]
    S, n = sums.sums, sums.counts
    P = weights @ np.hstack([S, n, S * S, S * n, n * n])
    reps = ratio(P[:, :M], P[:, M : 2 * M])
    return reps, _variances(sums, reps, P[:, M : 2 * M], P[:, 2 * M :])


def ratio(num: FloatArray, den: FloatArray) -> FloatArray:
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
