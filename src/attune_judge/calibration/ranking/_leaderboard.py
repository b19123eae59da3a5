"""Leaderboard: per-model means with paired cluster-bootstrap intervals and rank sets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, PrivateAttr

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel, kept
from attune_judge.calibration.ranking._ranksets import (
    RankProbabilities,
    RankSets,
    StudentizedDraws,
    arena_rank_upper_bound,
    claim_rank_probabilities,
    claim_rank_sets,
    no_rank_claims,
    ranks_of,
)
from attune_judge.calibration.resampling._bootstrap import (
    MIN_CLUSTERS,
    FloatArray,
    few_clusters_warning,
    no_claim_reason,
)
from attune_judge.calibration.resampling._bounded import (
    Bounds,
    check_level,
    infer_bounds,
    interval_warnings,
)
from attune_judge.calibration.resampling._means import (
    PairedBootstrapResult,
    paired_cluster_bootstrap,
)
from attune_judge.calibration.resampling._ratio import ClusterSums
from attune_judge.errors import UserError

__all__ = ["Leaderboard", "LeaderboardRow", "leaderboard", "leaderboard_from_sums"]


class LeaderboardRow(ResultModel):
    """One model's line of the leaderboard."""

    model: str
    """Model name."""
    score: Metric
    """Mean score (ratio estimator over clusters) with its paired cluster-bootstrap interval."""
    rank: int
    """Point rank ``1 + #{k : θ̂_k > θ̂_j}`` (1 = best)."""
    rank_set_simultaneous: tuple[int, int]
    """Simultaneous confidence set for the rank (all sets hold jointly at ``level``)."""
    rank_set_marginal: tuple[int, int]
    """Marginal confidence set for this model's rank."""
    arena_rank_upper_bound: int
    """Chatbot-Arena style best rank ``1 + #{k : lower_k > upper_j}`` (comparison only)."""
    naive_rank_interval: tuple[int, int]
    """Percentile interval of bootstrap ranks (under-covers with near-ties; comparison only)."""
    p_rank_1: float | None
    """Bootstrap probability of being best; a tie for first is split evenly among the tied
    models, so the column sums to 1 (over the models with a rank claim; ``None`` for a model
    without one)."""
    p_rank_1_or_tied: float | None = 0.0
    """Bootstrap probability of being best or tied for best (ties counted fully)."""
    p_rank_at_most: list[float]
    """``p_rank_at_most[k-1]`` = P(rank ≤ k)."""
    n_clusters: int
    """Clusters in which this model has a score."""
    n: int
    """Number of scores."""
    no_rank_claim: str | None = None
    """Why this model makes no rank claim (no valid interval: too few conversations, none,
    or zero width; :func:`~attune_judge.calibration.no_claim_reason`): its rank sets are
    ``[1, p]``, it has no tier and no P(rank 1). ``None``: it may be ranked."""


class Leaderboard(ResultModel):
    """Everything ``leaderboard`` computes; rows sorted best first."""

    rows: list[LeaderboardRow]
    """One row per model, best first."""
    level: float
    """Confidence level of intervals and rank sets."""
    B: int
    """Bootstrap replicates."""
    seed: int
    """Seed of the cluster weights and of the simulated critical values."""
    n_clusters: int
    """Number of clusters (conversations)."""
    covariance: list[list[float]]
    """Closed-form cluster-robust covariance of the means (order of ``models``)."""
    covariance_bootstrap: list[list[float]]
    """Bootstrap covariance of the means (cross-check)."""
    models: list[str]
    """Model order of the covariance matrices."""
    rank_sets_simultaneous: RankSets
    """Simultaneous rank sets (Mogstad et al. 2024, step-down)."""
    rank_sets_marginal: RankSets
    """Marginal rank sets."""
    tiers: list[list[str]]
    """Models grouped by identical simultaneous rank set (best tier first): models in one
    tier cannot be ordered at ``level``. A single tier of every model when rank claims are
    refused; models without a rank claim of their own (``LeaderboardRow.no_rank_claim``) are
    in no tier."""
    note: str
    """How to read the table."""
    rank_claims: bool = True
    """Whether rank sets and tiers are reported; ``False`` below ``MIN_CLUSTERS`` clusters
    (every rank set is then ``[1, p]``)."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats: too few conversations, undefined replicates, scores at a bound, ..."""
    nan_scores: dict[str, int] = Field(default_factory=dict)
    """NaN scores skipped, per model (models without any are left out)."""
    models_without_scores: dict[str, str] = Field(default_factory=dict)
    """Models with no usable score (no row), and why."""

    _bootstrap: PairedBootstrapResult | None = PrivateAttr(default=None)

    @property
    def bootstrap(self) -> PairedBootstrapResult:
        """The underlying paired bootstrap (with replicates and weights)."""
        return kept(self._bootstrap, "bootstrap not kept")


def _tiers(rows: list[LeaderboardRow]) -> list[list[str]]:
    tiers: list[list[str]] = []
    last: tuple[int, int] | None = None
    for r in rows:
        if r.rank_set_simultaneous != last:
            tiers.append([])
            last = r.rank_set_simultaneous
        tiers[-1].append(r.model)
    return tiers


def leaderboard(
    models: Sequence[str],
    clusters: Sequence[object],
    scores: Sequence[float] | FloatArray,
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    scheme: str = "multinomial",
    method: IntervalMethod = "studentized",
    n_draws: int = 20_000,
    weights: FloatArray | None = None,
    bounds: Bounds | None = None,
) -> Leaderboard:
    """Rank models by mean score with intervals, rank sets and rank probabilities.

    Parameters
    ----------
    models, clusters, scores
        Long columns: one score per (model, cluster, turn) row. NaN scores are skipped and
        counted per model (``nan_scores``; a model with only NaN scores is listed in
        ``models_without_scores``); an infinite score is refused (UserError naming its row).
        Scores of one cluster are resampled together and all models share the draws.
    B, level, seed, scheme, method
        Bootstrap replicates (``DEFAULT_B``, 2,000), confidence level (95%), seed, weight scheme,
        interval method (``studentized``: symmetric bootstrap-t with the cluster-robust SE,
        chosen by simulation for few conversations; ``bca`` or ``percentile`` on request).
    n_draws
        Most bootstrap replicates used for the rank-set critical values (a bootstrap of the
        max-t statistic,
        :class:`~attune_judge.calibration.resampling._maxt.StudentizedDraws`, on the first
        rows of the same cluster draws); also capped at ``4·10⁷ / models²`` so memory stays
        bounded (1,000 for 200 models).
    weights
        A ``(B × C)`` cluster-weights matrix to reuse, rows over the clusters sorted by id
        (e.g. ``bootstrap_weights(C, B, seed)`` shared with another leaderboard or statistic,
        so the two are paired); overrides ``B`` and ``scheme``.
    bounds
        ``(lo, hi)`` of the scores (``(0, 1)`` for normalised scores): intervals for bounded
        scores (:func:`paired_cluster_bootstrap`). Default: ``(0, 1)`` when every score is 0
        or 1 (pass/fail), else none.

    Returns
    -------
    Leaderboard
        Rows best first; rank sets use the closed-form cluster-robust covariance. With fewer
        than ``MIN_CLUSTERS`` (10) conversations no rank claim is made: every rank set is
        ``[1, p]``, there is one tier, and ``warnings`` says why.
    """
    check_level(level)
    vals = np.asarray(scores, dtype=np.float64)
    if len(vals) != len(models) or len(vals) != len(clusters):
        raise UserError("models, clusters and scores must have the same length")
    if np.isinf(vals).any():
        i = int(np.flatnonzero(np.isinf(vals))[0])
        raise UserError(
            f"row {i + 1} (model {models[i]!r}, cluster {clusters[i]!r}): score is {vals[i]}; "
            "scores must be finite"
        )
    nan = np.isnan(vals)
    names = [str(m) for m in models]
    nan_counts = Counter(m for m, bad in zip(names, nan, strict=True) if bad)
    usable = {m for m, bad in zip(names, nan, strict=True) if not bad}
    without = {m: f"all {k} scores are NaN" for m, k in nan_counts.items() if m not in usable}
    try:
        sums = ClusterSums.from_long(models, clusters, vals)
    except ValueError as exc:
        raise UserError(f"cannot build a leaderboard: {exc}") from None
    try:
        board = leaderboard_from_sums(
            sums,
            B=B,
            level=level,
            seed=seed,
            scheme=scheme,
            method=method,
            n_draws=n_draws,
            weights=weights,
            bounds=bounds if bounds is not None else infer_bounds(vals),
        )
    except ValueError as exc:
        raise UserError(f"cannot build a leaderboard: {exc}") from None
    board.nan_scores = dict(sorted(nan_counts.items()))
    board.models_without_scores = dict(sorted(without.items()))
    board.warnings += [
        f"{m}: {k} NaN score(s) skipped" for m, k in sorted(nan_counts.items()) if m in usable
    ] + [f"{m}: no usable score ({why}); left out of the leaderboard" for m, why in without.items()]
    return board


def leaderboard_from_sums(
    sums: ClusterSums,
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    scheme: str = "multinomial",
    method: IntervalMethod = "studentized",
    n_draws: int = 20_000,
    weights: FloatArray | None = None,
    bounds: Bounds | None = None,
) -> Leaderboard:
    """:func:`leaderboard` from per-cluster sums (e.g. ratio-estimator numerators and
    denominators that are not one score per row, or tables sharing one cluster draw).

    Every label needs at least one observation; the arguments are those of
    :func:`leaderboard`.
    """
    if len(sums.clusters) < 2:
        raise UserError("a leaderboard needs scores from at least two clusters (conversations)")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.ndim != 2 or weights.shape[1] != len(sums.clusters):
            raise UserError(
                f"leaderboard weights must have one column per cluster ({len(sums.clusters)}); "
                f"got shape {weights.shape}"
            )
        B = len(weights)
    check_level(level)
    boot = paired_cluster_bootstrap(
        sums,
        B=B,
        level=level,
        seed=seed,
        scheme=scheme,
        method=method,
        weights=weights,
        bounds=bounds,
    )
    theta = sums.estimate
    cov = np.asarray(boot.covariance_closed_form)
    names = sums.labels
    C, p = len(sums.clusters), len(names)
    claims = C >= MIN_CLUSTERS
    warnings = [w for w in [few_clusters_warning(C)] if w]
    blocked = [no_claim_reason(m) for m in boot.means]
    ok = [why is None for why in blocked]
    if claims:
        # bootstrap of the max-t statistic on (the first rows of) the same cluster draws
        n_crit = min(len(boot.weights), n_draws, max(1_000, int(4e7 // max(1, p * p))))

        def draws(idx: NDArray[np.intp]) -> StudentizedDraws:
            return StudentizedDraws(_columns(sums, idx), boot.weights[:n_crit])

        sim, mar = claim_rank_sets(theta, cov, names, ok, draws, level=level, seed=seed)
    else:
        sim, mar = no_rank_claims(names, level, seed)
    warnings += _rank_warnings(sim, mar) if claims else []
    probs: RankProbabilities = claim_rank_probabilities(boot.replicates, names, ok, level)
    arena = arena_rank_upper_bound([m.lower for m in boot.means], [m.upper for m in boot.means])
    point_rank = ranks_of(theta)
    undefined = [m.model_copy() for m in boot.means if m.note and "no interval" in m.note]
    if undefined:
        warnings.append(f"{len(undefined)} model(s) without an interval: " + undefined[0].note)  # type: ignore[operator]
    warnings += interval_warnings(boot.means)
    if claims:
        warnings += [
            f"{name}: no rank claim ({why}); comparable to every model" + _UNRANKED
            for name, why in zip(names, blocked, strict=True)
            if why is not None
        ]
    rows = [
        LeaderboardRow(
            model=name,
            score=boot.means[j],
            rank=int(point_rank[j]),
            rank_set_simultaneous=(sim.lower[j], sim.upper[j]),
            rank_set_marginal=(mar.lower[j], mar.upper[j]),
            arena_rank_upper_bound=arena[j],
            naive_rank_interval=(probs.naive_lower[j], probs.naive_upper[j]),
            p_rank_1=probs.p_rank_1[j],
            p_rank_1_or_tied=probs.p_rank_1_or_tied[j],
            p_rank_at_most=probs.p_rank_at_most[j],
            n_clusters=int(np.sum(sums.counts[:, j] > 0)),
            n=int(sums.counts[:, j].sum()),
            no_rank_claim=blocked[j],
        )
        for j, name in enumerate(names)
    ]
    rows.sort(key=lambda r: (claims and r.no_rank_claim is not None, r.rank, r.model))
    pct = f"{level * 100:.10g}%"
    note = (
        f"{pct} intervals from a paired cluster bootstrap over {C} clusters (B={B}, "
        f"seed={seed}; {_method_words(method)}). "
        + (
            "Rank sets: Mogstad, Romano, Shaikh & Wilhelm (2024), step-down, critical values "
            "from a cluster bootstrap of the max-t statistic. Tiers group models whose "
            "simultaneous rank sets coincide: "
            f"they cannot be ordered at {pct}. "
            if claims
            else f"No rank sets, tiers or P(rank 1): fewer than {MIN_CLUSTERS} clusters. "
        )
        + (
            "P(rank 1) splits ties for first evenly (sums to 1"
            + (" over the models with a rank claim" if probs.among is not None else "")
            + "); "
            if any(ok)
            else ""
        )
        + "'arena' and 'naive' ranks are for comparison only."
    )
    if probs.p_tie_at_top > 0:
        note += f" In {probs.p_tie_at_top:.1%} of replicates two or more models tie for first."
    out = Leaderboard(
        rows=rows,
        level=level,
        B=B,
        seed=seed,
        n_clusters=C,
        covariance=cov.tolist(),
        covariance_bootstrap=boot.covariance_bootstrap,
        models=names,
        rank_sets_simultaneous=sim,
        rank_sets_marginal=mar,
        tiers=_tiers([r for r in rows if r.no_rank_claim is None])
        if claims
        else [[r.model for r in rows]],
        note=note,
        rank_claims=claims,
        warnings=warnings,
    )
    out._bootstrap = boot
    return out


_UNRANKED = " (rank set: every rank; no tier, no P(rank 1))"


def _columns(sums: ClusterSums, idx: NDArray[np.intp]) -> ClusterSums:
    """The labels ``idx`` of ``sums`` (same clusters)."""
    return ClusterSums(
        sums.clusters,
        [sums.labels[i] for i in idx],
        sums.sums[:, idx],
        sums.counts[:, idx],
        None if sums.extremes is None else sums.extremes[idx],
    )


def _rank_warnings(sim: RankSets, mar: RankSets) -> list[str]:
    if any(not np.isfinite(c) for cs in sim.critical_values + mar.critical_values for c in cs):
        return [
            "rank sets: a critical value is undefined (too many bootstrap replicates without "
            "spread); the pairs it governs are not separated"
        ]
    return []


def _method_words(method: str) -> str:
    return {
        "studentized": "symmetric studentized bootstrap-t with the cluster-robust SE",
        "bca": "BCa, percentile where BCa is undefined",
        "percentile": "percentile",
    }.get(method, method)
