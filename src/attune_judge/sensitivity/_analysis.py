"""Does a ranking survive a change of rubric or judge? Scores, τ, rank flips and verdicts.

Every variant and every model is evaluated on **one** matrix of conversation weights
(``W``, B × C, Multinomial(C, 1/C) rows): a paired cluster bootstrap across models *and*
variants, so the interval of a difference between two variants (or two models under one
variant) keeps their covariance.

Verdict rule (``RULE``), at the declared α:

* a pair of models is a **significant flip** when the point estimates of the variant order it
  oppositely to the base (``d_base > 0 > d_variant`` with ``d = θ_a − θ_b``) and the variant's
  paired interval of ``d`` lies entirely below 0, at level ``1 − α/P`` (Bonferroni over the
  ``P`` model pairs; ``1 − α`` with ``adjust="none"``);
* a variant is **unstable** when it has a significant flip, or when the upper end of the
  (1 − α) percentile interval of Kendall τ-b between its model means and the base's falls below
  ``tau_threshold``; it is **stable** when it has no significant flip and the *lower* end of
  that interval is at or above ``tau_threshold`` (with at least ``MIN_CLUSTERS`` = 10
  conversations); otherwise it is **inconclusive** — the data neither confirm nor rule out a
  change of ranking (a fully reversed ranking with τ = −1 but an interval [−1, 1] is not
  "stable"). Verdicts come from intervals, never from point estimates alone.

A flip inside the intervals (either difference interval contains 0) is reported in the
rank-flip table but does not make a variant unstable on its own.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import (
    MIN_CLUSTERS,
    IntervalMethod,
    PairComparison,
    SensitivityAnalysis,
    VarianceDecomposition,
    VariantRanking,
    VariantVerdict,
    bootstrap_weights,
    few_clusters_warning,
)
from attune_judge.sensitivity._paired import (
    VariantBoot,
    aligned_sums,
    criterion_shifts,
    pair_comparisons,
    ranking,
)
from attune_judge.sensitivity._table import CriterionTable, ScoreTable

__all__ = ["RULE", "analyze_sensitivity"]

RULE = (
    "A pair of models is a significant flip when the variant's point estimates order it "
    "oppositely to the base's and the variant's paired cluster-bootstrap interval of the "
    "difference (level 1 - alpha/P, Bonferroni over the P model pairs; 1 - alpha without "
    "adjustment) excludes 0 on the flipped side. A variant is unstable when it has at least "
    "one significant flip, or when the upper end of the (1 - alpha) interval of Kendall tau-b "
    "between its model means and the base's is below tau_threshold; stable when it has no "
    "significant flip and the lower end of that interval is at least tau_threshold (with at "
    "least 10 conversations); otherwise inconclusive."
)


def _verdict(
    ranking: VariantRanking,
    pairs: list[PairComparison],
    tau_threshold: float,
    n_clusters: int = MIN_CLUSTERS,
) -> VariantVerdict:
    flips = [p for p in pairs if p.flipped]
    significant = [p for p in flips if p.significant]
    reasons = [
        f"{p.model_b} now above {p.model_a} (difference {p.variant_diff:+.3f}, interval "
        f"[{p.variant_lower:.3f}, {p.variant_upper:.3f}] excludes 0)"
        for p in significant
    ]
    if ranking.n_scores == 0:
        reasons.append(
            f"no scores (all {ranking.n_missing} judgments failed or missing): nothing to "
            "compare with the base"
        )
    tau = ranking.tau
    tau_upper = None if tau is None else tau.upper
    tau_lower = None if tau is None else tau.lower
    if tau_upper is not None and tau_upper < tau_threshold:
        reasons.append(
            f"Kendall tau upper bound {tau_upper:.3f} is below the threshold {tau_threshold}"
        )
    verdict = "unstable" if reasons and ranking.n_scores else "stable"
    if verdict == "stable":
        if tau_lower is None:
            reasons.append("Kendall tau has no interval: stability is not established")
        elif tau_lower < tau_threshold:
            reasons.append(
                f"Kendall tau interval [{tau_lower:.3f}, {tau_upper:.3f}] reaches below the "
                f"threshold {tau_threshold}: stability is not established"
            )
        if n_clusters < MIN_CLUSTERS:
            reasons.append(
                f"only {n_clusters} conversations (fewer than {MIN_CLUSTERS}): no claim either way"
            )
        if reasons:
            verdict = "inconclusive"
    return VariantVerdict(
        variant=ranking.variant,
        stable=verdict == "stable",
        reasons=reasons,
        n_flips=len(flips),
        n_significant_flips=len(significant),
        tau=None if tau is None else tau.estimate,
        tau_upper=tau_upper,
        verdict=verdict,
        tau_lower=tau_lower,
    )


def analyze_sensitivity(
    scores: ScoreTable,
    *,
    base: str = "base",
    criteria: CriterionTable | None = None,
    variance: VarianceDecomposition | None = None,
    alpha: float = 0.05,
    tau_threshold: float = 0.8,
    adjust: Literal["bonferroni", "none"] = "bonferroni",
    B: int = DEFAULT_B,
    seed: int = 0,
    method: IntervalMethod = "studentized",
    rank_sets: bool = True,
    bounds: tuple[float, float] | None = None,
) -> SensitivityAnalysis:
    """Compare each variant's model scores and ranking with the base variant's.

    Parameters
    ----------
    scores
        Overall scores, one row per (variant, model, conversation, turn), on one scale for
        every variant (normalised [0, 1] when variants change the scale).
    base
        Name of the base variant.
    criteria
        Optional normalised per-criterion scores, for the criterion shifts.
    variance
        A precomputed :func:`variance_decomposition` to include in the result.
    alpha
        Declared α: intervals are at ``1 − α``; verdicts follow :data:`RULE`.
    tau_threshold
        τ upper bound below which a variant is unstable.
    adjust
        ``bonferroni`` (pair intervals at ``1 − α/P``) or ``none``.
    B, seed
        Bootstrap replicates and seed of the shared cluster weights.
    method
        Interval method of the model means (``studentized``, the default: symmetric
        bootstrap-t with the cluster-robust SE; ``bca`` or ``percentile``). Differences
        between models use the studentized interval too; shifts and τ percentile intervals.
    rank_sets
        Whether to compute simultaneous confidence sets for ranks per variant.
    bounds
        ``(low, high)`` of the scores (``(0, 1)`` for normalised ones): the model means'
        intervals then stay on it (see :func:`~attune_judge.calibration.paired_cluster_bootstrap`).

    Returns
    -------
    SensitivityAnalysis
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must lie strictly between 0 and 1")
    variants = scores.variants
    if base not in variants:
        raise ValueError(f"base variant {base!r} has no scores (variants: {variants})")
    variants = [base, *[v for v in variants if v != base]]
    models, clusters = scores.models, scores.conversations
    if len(clusters) < 2:
        raise ValueError("the sensitivity analysis needs scores from at least two conversations")
    level = 1 - alpha
    n_pairs = max(1, len(models) * (len(models) - 1) // 2)
    pair_level = 1 - alpha / n_pairs if adjust == "bonferroni" else level
    W = bootstrap_weights(len(clusters), B, seed)
    per: dict[str, VariantBoot] = {}
    for v in variants:
        mask = scores.variant == v
        sums = aligned_sums(
            clusters, models, scores.conversation[mask], scores.model[mask], scores.score[mask]
        )
        per[v] = VariantBoot(v, sums, W, level=level, seed=seed, method=method, bounds=bounds)
    rankings: list[VariantRanking] = []
    pairs: list[PairComparison] = []
    verdicts: list[VariantVerdict] = []
    for v in variants:
        is_base = v == base
        rk = ranking(
            per[v],
            None if is_base else per[base],
            level=level,
            B=B,
            seed=seed,
            rank_sets=rank_sets,
        )
        mask = scores.variant == v
        rk.n_missing = int(np.sum(~np.isfinite(scores.score[mask])))
        rankings.append(rk)
        if not is_base:
            ps = pair_comparisons(per[v], per[base], pair_level=pair_level, B=B, seed=seed)
            pairs.extend(ps)
            verdicts.append(_verdict(rk, ps, tau_threshold, len(clusters)))
    shifts = (
        criterion_shifts(criteria, clusters, base, variants, W, level=level, seed=seed)
        if criteria is not None
        else []
    )
    return SensitivityAnalysis(
        base=base,
        variants=variants,
        models=models,
        alpha=alpha,
        level=level,
        pair_level=pair_level,
        adjust=adjust,
        tau_threshold=tau_threshold,
        B=B,
        seed=seed,
        n_conversations=len(clusters),
        rankings=rankings,
        pairs=pairs,
        criterion_shifts=shifts,
        variance=variance,
        verdicts=verdicts,
        rule=RULE,
        warnings=[w for w in [few_clusters_warning(len(clusters))] if w]
        + [
            f"variant {r.variant!r}: no scores (all {r.n_missing} judgments failed or "
            "missing); no means, ranks or shifts"
            for r in rankings
            if r.n_scores == 0
        ],
    )
