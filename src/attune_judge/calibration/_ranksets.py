"""Confidence sets for ranks (Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for Ranks").

Rank ``r_j = 1 + #{k : θ_k > θ_j}`` (1 = best). With ``σ_jk = √(Σ_jj + Σ_kk − 2Σ_jk)`` and
``c(I)`` the (1−α) quantile of ``max_{(j,k)∈I} (Z_j − Z_k)/σ_jk``, ``Z ~ N(0, Σ̂)`` (simulated,
seeded), the pair (j, k) is rejected — "j is better than k" — when ``θ̂_j − θ̂_k > σ_jk c(I)``.
Step down: remove rejected pairs from I, recompute c on the rest, repeat until nothing new is
rejected. The set for j is ``[1 + #{k : (k,j) rejected}, p − #{k : (j,k) rejected}]``.
Simultaneous sets use all ordered pairs; the marginal set for j uses the pairs involving j.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attune_judge.calibration._bootstrap import FloatArray
from attune_judge.calibration._results import ResultModel

__all__ = [
    "RankProbabilities",
    "RankSets",
    "arena_rank_upper_bound",
    "rank_confidence_sets",
    "rank_probabilities",
    "ranks_of",
    "simulate_max_critical_value",
]

Pair = tuple[int, int]


class RankSets(ResultModel):
    """Confidence sets for the ranks of p labels (1 = best)."""

    labels: list[str]
    """Labels in input order."""
    kind: Literal["simultaneous", "marginal"]
    """Joint coverage of all sets (simultaneous) or coverage of each set alone (marginal)."""
    level: float
    """Coverage probability (0.95 by default)."""
    lower: list[int]
    """Best rank each label can have."""
    upper: list[int]
    """Worst rank each label can have."""
    critical_values: list[list[float]]
    """Critical value of each step-down step (one list for simultaneous; one per label for
    marginal)."""
    n_draws: int
    """Normal draws used to simulate the critical values."""
    seed: int
    """Seed of the normal draws."""


def ranks_of(theta: FloatArray) -> FloatArray:
    """Ranks ``1 + #{k : θ_k > θ_j}`` along the last axis (ties share the better rank)."""
    t = np.asarray(theta, dtype=np.float64)
    return 1 + np.sum(t[..., None, :] > t[..., :, None], axis=-1).astype(np.float64)


def _sigma(cov: FloatArray) -> FloatArray:
    d = np.diag(cov)
    var = d[:, None] + d[None, :] - 2 * cov
    return np.asarray(np.sqrt(np.clip(var, 0, None)), dtype=np.float64)


def _draws(cov: FloatArray, n_draws: int, seed: int) -> FloatArray:
    rng = np.random.default_rng(seed)
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0, None))[None, :]
    return np.asarray(rng.standard_normal((n_draws, len(cov))) @ root.T, dtype=np.float64)


def _critical_value(Z: FloatArray, sigma: FloatArray, pairs: Sequence[Pair], level: float) -> float:
    live = [(j, k) for j, k in pairs if sigma[j, k] > 0]
    if not live:
        return 0.0
    J = np.array([p[0] for p in live])
    K = np.array([p[1] for p in live])
    s = sigma[J, K]
    mx = np.empty(len(Z))
    for i in range(0, len(Z), 10_000):
        z = Z[i : i + 10_000]
        mx[i : i + 10_000] = np.max((z[:, J] - z[:, K]) / s, axis=1)
    return float(np.quantile(mx, level))


def simulate_max_critical_value(
    cov: FloatArray,
    pairs: Sequence[Pair] | None = None,
    *,
    level: float = 0.95,
    n_draws: int = 100_000,
    seed: int = 0,
) -> float:
    """The ``level`` quantile of ``max_{(j,k)∈pairs} (Z_j − Z_k)/σ_jk`` with ``Z ~ N(0, cov)``.

    ``pairs`` defaults to all ordered pairs. With ``cov = s²I`` this is Tukey's studentized
    range quantile ``q_{p,∞}/√2``.
    """
    cov = np.asarray(cov, dtype=np.float64)
    p = len(cov)
    allp = [(j, k) for j in range(p) for k in range(p) if j != k] if pairs is None else pairs
    return _critical_value(_draws(cov, n_draws, seed), _sigma(cov), allp, level)


def _stepdown(
    theta: FloatArray,
    sigma: FloatArray,
    Z: FloatArray,
    pairs: list[Pair],
    level: float,
    stepdown: bool,
) -> tuple[set[Pair], list[float]]:
    rejected: set[Pair] = set()
    crits: list[float] = []
    while True:
        rest = [pr for pr in pairs if pr not in rejected]
        if not rest:
            break
        c = _critical_value(Z, sigma, rest, level)
        crits.append(c)
        new = {
            (j, k)
            for j, k in rest
            if (sigma[j, k] > 0 and theta[j] - theta[k] > sigma[j, k] * c)
            or (sigma[j, k] == 0 and theta[j] > theta[k])
        }
        rejected |= new
        if not new or not stepdown:
            break
    return rejected, crits


def rank_confidence_sets(
    estimates: Sequence[float] | FloatArray,
    cov: Sequence[Sequence[float]] | FloatArray,
    labels: Sequence[str] | None = None,
    *,
    kind: Literal["simultaneous", "marginal"] = "simultaneous",
    level: float = 0.95,
    n_draws: int = 50_000,
    seed: int = 0,
    stepdown: bool = True,
) -> RankSets:
    """Marginal or simultaneous confidence sets for ranks, with step-down.

    Parameters
    ----------
    estimates
        Point estimates ``θ̂`` (higher = better).
    cov
        Their covariance ``Σ̂`` (for example ``cluster_robust_covariance``).
    labels
        Names; default ``0..p-1``.
    kind, level, n_draws, seed, stepdown
        Simultaneous or marginal, coverage, number of simulated normal vectors, their seed,
        and whether to step down (``False`` = single step).

    Returns
    -------
    RankSets
    """
    theta = np.asarray(estimates, dtype=np.float64)
    S = np.asarray(cov, dtype=np.float64)
    p = len(theta)
    names = [str(x) for x in (labels if labels is not None else range(p))]
    sigma = _sigma(S)
    Z = _draws(S, n_draws, seed)
    n_better = np.zeros(p, dtype=int)  # #{k : (k, j) rejected}
    n_worse = np.zeros(p, dtype=int)  # #{k : (j, k) rejected}
    crit_lists: list[list[float]] = []
    if kind == "simultaneous":
        allp = [(j, k) for j in range(p) for k in range(p) if j != k]
        rej, crits = _stepdown(theta, sigma, Z, allp, level, stepdown)
        crit_lists.append(crits)
        for j, k in rej:
            n_worse[j] += 1
            n_better[k] += 1
    else:
        for j in range(p):
            pj = [(j, k) for k in range(p) if k != j] + [(k, j) for k in range(p) if k != j]
            rej, crits = _stepdown(theta, sigma, Z, pj, level, stepdown)
            crit_lists.append(crits)
            n_better[j] = sum(1 for a, b in rej if b == j)
            n_worse[j] = sum(1 for a, b in rej if a == j)
    return RankSets(
        labels=names,
        kind=kind,
        level=level,
        lower=[int(1 + x) for x in n_better],
        upper=[int(p - x) for x in n_worse],
        critical_values=crit_lists,
        n_draws=n_draws,
        seed=seed,
    )


def arena_rank_upper_bound(
    lower: Sequence[float | None], upper: Sequence[float | None]
) -> list[int]:
    """Chatbot-Arena style best rank: ``1 + #{k : lower_k > upper_j}`` (for comparison only)."""
    lo = np.array([np.nan if x is None else x for x in lower], dtype=np.float64)
    hi = np.array([np.nan if x is None else x for x in upper], dtype=np.float64)
    return [int(1 + np.sum(lo > hi[j])) for j in range(len(hi))]


class RankProbabilities(ResultModel):
    """Bootstrap distribution of ranks."""

    labels: list[str]
    """Labels."""
    p_rank_1: list[float]
    """P(rank = 1) per label."""
    p_rank_at_most: list[list[float]]
    """``p_rank_at_most[j][k-1]`` = P(rank_j ≤ k)."""
    naive_lower: list[int]
    """Naive percentile interval of bootstrap ranks (known to under-cover; comparison only)."""
    naive_upper: list[int]
    """Upper end of the naive rank interval."""


def rank_probabilities(
    replicates: FloatArray, labels: Sequence[str], level: float = 0.95
) -> RankProbabilities:
    """Rank distribution from ``(B × p)`` bootstrap replicates (NaN rows dropped)."""
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[np.all(np.isfinite(reps), axis=1)]
    p = reps.shape[1]
    R = ranks_of(reps)
    at_most = np.stack([np.mean(R <= k, axis=0) for k in range(1, p + 1)], axis=1)
    a = (1 - level) / 2
    lo = np.floor(np.quantile(R, a, axis=0, method="lower"))
    hi = np.ceil(np.quantile(R, 1 - a, axis=0, method="higher"))
    return RankProbabilities(
        labels=[str(x) for x in labels],
        p_rank_1=np.mean(R == 1, axis=0).tolist(),
        p_rank_at_most=at_most.tolist(),
        naive_lower=[int(x) for x in lo],
        naive_upper=[int(x) for x in hi],
    )
