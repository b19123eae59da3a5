"""The bootstrap of the max-t statistic behind the rank sets' critical values."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from attune_judge.calibration.resampling._bootstrap import FloatArray
from attune_judge.calibration.resampling._ratio import (
    ROUNDING,
    ClusterSums,
    cluster_robust_covariance,
    ratio_replicates,
)

__all__ = ["CHUNK_CELLS", "StudentizedDraws", "sigma_of"]

CHUNK_CELLS = 2_000_000
"""Largest draws × pairs block evaluated at once by the critical-value simulation."""


def sigma_of(cov: FloatArray) -> FloatArray:
    """``σ_jk = √(Σ_jj + Σ_kk − 2Σ_jk)`` for every pair (p × p)."""
    d = np.diag(cov)
    var = d[:, None] + d[None, :] - 2 * cov
    return np.asarray(np.sqrt(np.clip(var, 0, None)), dtype=np.float64)


class StudentizedDraws:
    """Bootstrap draws of the studentized differences, for critical values of rank sets.

    For replicate b (cluster weights ``w_b``) and ordered pair (j, k):
    ``t*_bjk = ((θ*_j − θ*_k) − (θ̂_j − θ̂_k)) / σ*_jk`` with σ*_jk the replicate's own
    cluster-robust standard error of the difference,
    ``σ*²_jk = C/(C−1) · Σ_c w_c (g_cj − g_ck)²``, ``g_cm = (S_cm − θ*_m n_cm) / Σ_c w_c n_cm``
    (the ratio estimator's influence values). The critical value of a set I of pairs is the
    ``level`` quantile of ``max_{(j,k)∈I} t*_jk``: a bootstrap of the max-t statistic, which
    carries the noise of the estimated σ's that a normal ``N(0, Σ̂)`` with Σ̂ treated as known
    misses (Mogstad et al. 2024 allow any consistent approximation of this distribution).

    A replicate without spread in either model of a pair (a pass/fail model that passed every
    resampled turn, and another that did too) has σ*_jk = 0: its deviation is then studentized
    by the full data's σ̂_jk, so a model at the bound is still compared through the other's
    variance (an infinite t* would make the critical value infinite and separate nothing).

    All ``n × p × p`` statistics are computed once (float32, in blocks of replicates) and each
    step-down step only takes maxima over the pairs still in play: memory ``4·n·p²`` bytes
    (160 MB for 200 models and n = 1,000) and time O(n·C·p²).
    """

    def __init__(self, sums: object, weights: FloatArray, chunk_cells: int = 1_000_000) -> None:
        assert isinstance(sums, ClusterSums)
        W = np.asarray(weights, dtype=np.float64)
        S, N = sums.sums, sums.counts
        C, p = S.shape
        theta = sums.estimate
        sigma_hat = sigma_of(cluster_robust_covariance(sums)) if C >= 2 else np.zeros((p, p))
        n = len(W)
        self.n = n
        self.T = np.empty((n, p, p), dtype=np.float32)
        b = max(1, chunk_cells // max(1, C * p + p * p))
        infl = C / max(C - 1, 1)
        for a in range(0, n, b):
            w = W[a : a + b]
            reps = ratio_replicates(sums, w)  # (b, p)
            den = w @ N  # (b, p)
            with np.errstate(invalid="ignore", divide="ignore"):
                G = (S[None, :, :] - reps[:, None, :] * N[None, :, :]) / den[:, None, :]
                Q = np.matmul(np.transpose(G * w[:, :, None], (0, 2, 1)), G)  # (b, p, p)
                d = np.diagonal(Q, axis1=1, axis2=2)
                var = d[:, :, None] + d[:, None, :] - 2 * Q
                scale = d[:, :, None] + d[:, None, :] + 2 * np.abs(Q)
                var[np.abs(var) <= ROUNDING * scale] = 0.0  # rounding noise of a zero spread
                sd = np.sqrt(np.clip(var * infl, 0, None))
                sd = np.where(sd > 0, sd, sigma_hat[None, :, :])
                diff = (reps[:, :, None] - reps[:, None, :]) - (theta[:, None] - theta[None, :])
                t = diff / sd
            t[diff == 0] = 0.0  # no deviation, whatever the spread
            t[np.isnan(t)] = -np.inf  # undefined (a model absent from the replicate)
            idx = np.arange(p)
            t[:, idx, idx] = -np.inf
            self.T[a : a + b] = t

    @classmethod
    def from_statistics(cls, tstar: NDArray[np.floating[Any]]) -> StudentizedDraws:
        """Draws from precomputed statistics ``t*_bjk`` of shape (n, p, p) (e.g. Bradley–Terry's,
        studentized by each replicate's sandwich covariance); NaN counts as undefined.

        A float32 array is used as it is, not copied (its NaN and diagonal entries are set to
        −inf in place)."""
        T = np.asarray(tstar, dtype=np.float32)
        n, p, _ = T.shape
        T[np.isnan(T)] = -np.inf
        T[:, np.arange(p), np.arange(p)] = -np.inf
        self = cls.__new__(cls)
        self.n, self.T = n, T
        return self

    def maxima(self, J: NDArray[np.intp], K: NDArray[np.intp]) -> FloatArray:
        """``max_{(j,k)} t*_jk`` over the given pairs, one value per replicate."""
        out = np.full(self.n, -np.inf)
        flat = self.T.reshape(self.n, -1)
        cols = J * self.T.shape[1] + K
        step = max(1, CHUNK_CELLS // max(1, len(cols)))
        for a in range(0, self.n, step):
            out[a : a + step] = flat[a : a + step][:, cols].max(axis=1)
        return out
