"""Confidence sets for ranks (Mogstad, Romano, Shaikh & Wilhelm 2024, "Inference for Ranks").

Rank ``r_j = 1 + #{k : θ_k > θ_j}`` (1 = best). With ``σ_jk = √(Σ_jj + Σ_kk − 2Σ_jk)`` and
``c(I)`` the (1−α) quantile of ``max_{(j,k)∈I} (Z_j − Z_k)/σ_jk``, ``Z ~ N(0, Σ̂)`` (simulated,
seeded), the pair (j, k) is rejected — "j is better than k" — when ``θ̂_j − θ̂_k > σ_jk c(I)``.
Step down: remove rejected pairs from I, recompute c on the rest, repeat until nothing new is
rejected. The set for j is ``[1 + #{k : (k,j) rejected}, p − #{k : (j,k) rejected}]``.
Simultaneous sets use all ordered pairs; the marginal set for j uses the pairs involving j.

Few clusters (``df``): ``Σ̂`` estimated from C clusters is itself noisy, and each standardised
difference ``(θ̂_j − θ̂_k)/σ̂_jk`` is then closer to a t(C−1) than to a normal variable. With
critical values from ``N(0, Σ̂)`` (Σ̂ treated as known) the joint coverage of all-tied models
falls to 64% at 10 conversations and 82% at 15. Given ``df = C − 1`` the critical value is
moved to the t scale by its tail probability, ``c_t = F_t(df)⁻¹(Φ(c))`` ("t-based quantiles":
the per-pair level implied by the Gaussian max is kept, each pair's quantile taken from
t(C−1)); see ``tests/calibration/test_coverage.py`` for the coverage this gives.

Memory: the simulated maxima are accumulated over blocks of draws × pairs of at most
``CHUNK_CELLS`` cells, so memory stays bounded (O(draws × models) for the normal draws) while
time is O(draws × pairs) per step — 200 models fit in well under 500 MB.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration._results import ResultModel
from attune_judge.calibration.resampling._bootstrap import FloatArray
from attune_judge.calibration.resampling._maxt import CHUNK_CELLS, StudentizedDraws, sigma_of

__all__ = [
    "RankProbabilities",
    "RankSets",
    "StudentizedDraws",
    "arena_rank_upper_bound",
    "claim_rank_probabilities",
    "claim_rank_sets",
    "no_rank_claims",
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
    df: float | None = None
    """Degrees of freedom of the covariance (critical values on the t scale); ``None``:
    normal critical values."""
    critical_values_from: Literal["normal", "t", "studentized_bootstrap"] = "normal"
    """Where the critical values come from: ``N(0, Σ̂)`` draws, those moved to the t scale, or
    the bootstrap of the max-t statistic (:class:`StudentizedDraws`; the leaderboard's and
    Bradley–Terry's)."""


def no_rank_claims(labels: Sequence[str], level: float, seed: int) -> tuple[RankSets, RankSets]:
    """The (simultaneous, marginal) rank sets when no rank claim is made (too few clusters):
    every label may take every rank."""
    p = len(labels)
    sim, mar = (
        RankSets(
            labels=list(labels),
            kind=kind,
            level=level,
            lower=[1] * p,
            upper=[p] * p,
            critical_values=[],
            n_draws=0,
            seed=seed,
        )
        for kind in ("simultaneous", "marginal")
    )
    return sim, mar


def claim_rank_sets(
    estimates: FloatArray,
    cov: FloatArray,
    labels: Sequence[str],
    claims: Sequence[bool],
    draws: Callable[[NDArray[np.intp]], StudentizedDraws],
    *,
    level: float,
    seed: int,
) -> tuple[RankSets, RankSets]:
    """(simultaneous, marginal) rank sets when only some labels may be ranked.

    The labels with ``claims`` true are ranked among themselves (critical values from
    ``draws(their indices)``); each of the others (no valid interval:
    :func:`~attune_judge.calibration.resampling._bootstrap.no_claim_reason`) is comparable to
    every label, so its set is ``[1, p]`` and it may sit above or below any ranked label:
    their sets ``[l, u]`` among themselves become ``[l, u + #unranked]``.
    """
    p = len(labels)
    idx = [int(i) for i in np.flatnonzero(np.asarray(claims, dtype=bool))]
    if len(idx) == 0:
        return no_rank_claims(labels, level, seed)
    theta = np.asarray(estimates, dtype=np.float64)[idx]
    sub = np.asarray(cov, dtype=np.float64)[np.ix_(idx, idx)]
    d = draws(np.asarray(idx, dtype=np.intp))
    names = [str(labels[i]) for i in idx]
    out = []
    for kind in ("simultaneous", "marginal"):
        rs = rank_confidence_sets(theta, sub, names, kind=kind, level=level, seed=seed, draws=d)
        lower, upper = [1] * p, [p] * p
        for a, i in enumerate(idx):
            lower[i], upper[i] = rs.lower[a], rs.upper[a] + (p - len(idx))
        out.append(rs.model_copy(update={"labels": list(labels), "lower": lower, "upper": upper}))
    return out[0], out[1]


def claim_rank_probabilities(
    replicates: FloatArray, labels: Sequence[str], claims: Sequence[bool], level: float
) -> RankProbabilities:
    """:func:`rank_probabilities` among the labels that may be ranked; the others get no
    probability (``None``), rank interval ``[1, p]`` and no ``P(rank ≤ k)``."""
    idx = [int(i) for i in np.flatnonzero(np.asarray(claims, dtype=bool))]
    p = len(labels)
    if len(idx) == p:
        return rank_probabilities(replicates, labels, level)
    reps = np.asarray(replicates, dtype=np.float64)[:, idx]
    if len(idx) == 0:
        sub = None
    else:
        sub = rank_probabilities(reps, [str(labels[i]) for i in idx], level)
    p1: list[float | None] = [None] * p
    p1t: list[float | None] = [None] * p
    at_most: list[list[float]] = [[] for _ in range(p)]
    lo, hi = [1] * p, [p] * p
    for a, i in enumerate(idx):
        assert sub is not None
        p1[i], p1t[i] = sub.p_rank_1[a], sub.p_rank_1_or_tied[a]
        at_most[i] = sub.p_rank_at_most[a]
        lo[i], hi[i] = sub.naive_lower[a], sub.naive_upper[a] + (p - len(idx))
    return RankProbabilities(
        labels=[str(x) for x in labels],
        p_rank_1=p1,
        p_rank_at_most=at_most,
        naive_lower=lo,
        naive_upper=hi,
        p_rank_1_or_tied=p1t,
        p_tie_at_top=0.0 if sub is None else sub.p_tie_at_top,
        n_replicates=0 if sub is None else sub.n_replicates,
        among=[str(labels[i]) for i in idx],
    )


def ranks_of(theta: FloatArray) -> FloatArray:
    """Ranks ``1 + #{k : θ_k > θ_j}`` along the last axis (ties share the better rank).

    Computed by sorting (O(p log p) per row, no p × p temporaries).
    """
    t = np.asarray(theta, dtype=np.float64)
    if t.ndim == 0:
        return np.ones(())
    if t.size == 0:  # no labels (or no rows): nothing to rank
        return np.empty(t.shape)
    flat = t.reshape(-1, t.shape[-1])
    out = np.empty_like(flat)
    srt = np.sort(flat, axis=1)
    p = flat.shape[1]
    for i in range(len(flat)):  # searchsorted is per row; rows are cheap
        out[i] = 1 + p - np.searchsorted(srt[i], flat[i], side="right")
    # NaN compares false with everything: NaN entries get the rank the comparison rule gives
    nan = np.isnan(flat)
    if nan.any():
        for row in np.flatnonzero(nan.any(axis=1)):
            r = flat[row]
            out[row] = 1 + np.sum(r[None, :] > r[:, None], axis=1)
    return out.reshape(t.shape)


def _draws(cov: FloatArray, n_draws: int, seed: int) -> FloatArray:
    rng = np.random.default_rng(seed)
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0, None))[None, :]
    return np.asarray(rng.standard_normal((n_draws, len(cov))) @ root.T, dtype=np.float64)


def _finite_quantile(values: FloatArray, level: float) -> float:
    """The ``level`` quantile of values that may hold ±inf; NaN when it is not finite (the
    quantile itself infinite, or every value undefined), never numpy's ``inf − inf``."""
    big = np.finfo(np.float64).max / 4
    v = np.clip(np.asarray(values, dtype=np.float64), -big, big)
    c = float(np.quantile(v, level))
    return c if abs(c) < big else float("nan")


def _critical_value(
    Z: FloatArray | StudentizedDraws,
    sigma: FloatArray,
    pairs: Sequence[Pair],
    level: float,
    df: float | None = None,
) -> float:
    live = [(j, k) for j, k in pairs if sigma[j, k] > 0]
    if not live:
        return 0.0
    J = np.fromiter((p[0] for p in live), dtype=np.intp, count=len(live))
    K = np.fromiter((p[1] for p in live), dtype=np.intp, count=len(live))
    if isinstance(Z, StudentizedDraws):
        return _finite_quantile(Z.maxima(J, K), level)
    s = sigma[J, K]
    n = len(Z)
    mx = np.full(n, -np.inf)
    pair_block = max(1, min(len(live), CHUNK_CELLS // max(1, min(n, 10_000))))
    draw_block = max(1, CHUNK_CELLS // pair_block)
    for i in range(0, n, draw_block):
        z = Z[i : i + draw_block]
        m = mx[i : i + draw_block]
        for a in range(0, len(live), pair_block):
            jj, kk, ss = J[a : a + pair_block], K[a : a + pair_block], s[a : a + pair_block]
            block = z[:, jj]
            block -= z[:, kk]
            block /= ss
            np.maximum(m, block.max(axis=1), out=m)
    c = float(np.quantile(mx, level))
    if df is not None and np.isfinite(df) and df > 0:
        from scipy import stats

        c = float(stats.t.ppf(stats.norm.cdf(c), df))
    return c


def simulate_max_critical_value(
    cov: FloatArray,
    pairs: Sequence[Pair] | None = None,
    *,
    level: float = DEFAULT_LEVEL,
    n_draws: int = 100_000,
    seed: int = 0,
    df: float | None = None,
) -> float:
    """The ``level`` quantile of ``max_{(j,k)∈pairs} (Z_j − Z_k)/σ_jk`` with ``Z ~ N(0, cov)``.

    ``pairs`` defaults to all ordered pairs. With ``cov = s²I`` this is Tukey's studentized
    range quantile ``q_{p,∞}/√2``. With ``df`` the value is mapped to the t(df) scale (see the
    module notes).
    """
    cov = np.asarray(cov, dtype=np.float64)
    p = len(cov)
    allp = [(j, k) for j in range(p) for k in range(p) if j != k] if pairs is None else pairs
    return _critical_value(_draws(cov, n_draws, seed), sigma_of(cov), allp, level, df)


def _stepdown(
    theta: FloatArray,
    sigma: FloatArray,
    Z: FloatArray | StudentizedDraws,
    pairs: list[Pair],
    level: float,
    stepdown: bool,
    df: float | None = None,
) -> tuple[set[Pair], list[float]]:
    rejected: set[Pair] = set()
    crits: list[float] = []
    while True:
        rest = [pr for pr in pairs if pr not in rejected]
        if not rest:
            break
        c = _critical_value(Z, sigma, rest, level, df)
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
    level: float = DEFAULT_LEVEL,
    n_draws: int = 50_000,
    seed: int = 0,
    stepdown: bool = True,
    df: float | None = None,
    draws: StudentizedDraws | None = None,
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
    df
        Degrees of freedom of ``Σ̂`` (``C − 1`` for the cluster-robust covariance of C
        clusters): critical values on the t scale (see the module notes); ``None`` treats
        ``Σ̂`` as known (normal critical values).

    Returns
    -------
    RankSets
    """
    theta = np.asarray(estimates, dtype=np.float64)
    S = np.asarray(cov, dtype=np.float64)
    p = len(theta)
    names = [str(x) for x in (labels if labels is not None else range(p))]
    sigma = sigma_of(S)
    Z: FloatArray | StudentizedDraws = draws if draws is not None else _draws(S, n_draws, seed)
    n_better = np.zeros(p, dtype=int)  # #{k : (k, j) rejected}
    n_worse = np.zeros(p, dtype=int)  # #{k : (j, k) rejected}
    crit_lists: list[list[float]] = []
    if kind == "simultaneous":
        allp = [(j, k) for j in range(p) for k in range(p) if j != k]
        rej, crits = _stepdown(theta, sigma, Z, allp, level, stepdown, df)
        crit_lists.append(crits)
        for j, k in rej:
            n_worse[j] += 1
            n_better[k] += 1
    else:
        for j in range(p):
            pj = [(j, k) for k in range(p) if k != j] + [(k, j) for k in range(p) if k != j]
            rej, crits = _stepdown(theta, sigma, Z, pj, level, stepdown, df)
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
        n_draws=n_draws if draws is None else draws.n,
        seed=seed,
        df=None if draws is not None else df,
        critical_values_from="normal"
        if draws is None and df is None
        else "t"
        if draws is None
        else "studentized_bootstrap",
    )


def arena_rank_upper_bound(
    lower: Sequence[float | None], upper: Sequence[float | None]
) -> list[int]:
    """Chatbot-Arena style best rank: ``1 + #{k : lower_k > upper_j}`` (for comparison only)."""
    lo = np.array([np.nan if x is None else x for x in lower], dtype=np.float64)
    hi = np.array([np.nan if x is None else x for x in upper], dtype=np.float64)
    return [int(1 + np.sum(lo > hi[j])) for j in range(len(hi))]


class RankProbabilities(ResultModel):
    """Bootstrap distribution of ranks.

    Ties: a replicate in which several models share the best mean gives each of them rank 1.
    ``p_rank_1`` splits such a tie evenly (each of k tied models gets 1/k), so the column sums
    to 1 over models; ``p_rank_1_or_tied`` counts every tied model fully (it can sum to more
    than 1), and ``p_tie_at_top`` is the share of replicates with a tie for first.
    """

    labels: list[str]
    """Labels."""
    p_rank_1: list[float | None]
    """P(best), ties for first split evenly: sums to 1 over labels (``None``: a label that
    makes no rank claim, see ``among``)."""
    p_rank_at_most: list[list[float]]
    """``p_rank_at_most[j][k-1]`` = P(rank_j ≤ k) (tied models share the better rank)."""
    naive_lower: list[int]
    """Naive percentile interval of bootstrap ranks (known to under-cover; comparison only)."""
    naive_upper: list[int]
    """Upper end of the naive rank interval."""
    p_rank_1_or_tied: list[float | None] = Field(default_factory=list)
    """P(rank 1 or tied for it): every tied model counts fully."""
    p_tie_at_top: float = 0.0
    """Share of replicates in which two or more models tie for first."""
    n_replicates: int = 0
    """Replicates used (those with every label defined)."""
    among: list[str] | None = None
    """The labels the probabilities are computed among when some make no rank claim (no
    valid interval); ``None``: all labels."""


def rank_probabilities(
    replicates: FloatArray, labels: Sequence[str], level: float = DEFAULT_LEVEL
) -> RankProbabilities:
    """Rank distribution from ``(B × p)`` bootstrap replicates (NaN rows dropped)."""
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[np.all(np.isfinite(reps), axis=1)]
    p = reps.shape[1]
    R = ranks_of(reps)
    first = R == 1
    n_first = first.sum(axis=1, keepdims=True)
    at_most = np.stack([np.mean(R <= k, axis=0) for k in range(1, p + 1)], axis=1)
    a = (1 - level) / 2
    lo = np.floor(np.quantile(R, a, axis=0, method="lower"))
    hi = np.ceil(np.quantile(R, 1 - a, axis=0, method="higher"))
    return RankProbabilities(
        labels=[str(x) for x in labels],
        p_rank_1=np.mean(first / np.maximum(n_first, 1), axis=0).tolist(),
        p_rank_at_most=at_most.tolist(),
        naive_lower=[int(x) for x in lo],
        naive_upper=[int(x) for x in hi],
        p_rank_1_or_tied=np.mean(first, axis=0).tolist(),
        p_tie_at_top=float(np.mean(n_first[:, 0] > 1)) if len(R) else 0.0,
        n_replicates=len(R),
    )
