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
  ``tau_threshold``; otherwise it is **stable**.

A flip inside the intervals (either difference interval contains 0) is reported in the
rank-flip table but does not make a variant unstable on its own.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from attune_judge.calibration._bootstrap import (
    ClusterSums,
    FloatArray,
    bootstrap_weights,
    interval_endpoints,
)
from attune_judge.calibration._means import PairedBootstrapResult, paired_cluster_bootstrap
from attune_judge.calibration._rank_agreement import tau_b_rows
from attune_judge.calibration._ranksets import rank_confidence_sets, ranks_of
from attune_judge.calibration._results import IntervalMethod, Metric
from attune_judge.sensitivity._results import (
    CriterionShift,
    ModelScore,
    PairComparison,
    SensitivityAnalysis,
    VarianceDecomposition,
    VariantRanking,
    VariantVerdict,
)
from attune_judge.sensitivity._table import CriterionTable, ScoreTable, StrArray

__all__ = ["RULE", "analyze_sensitivity"]

RULE = (
    "A pair of models is a significant flip when the variant's point estimates order it "
    "oppositely to the base's and the variant's paired cluster-bootstrap interval of the "
    "difference (level 1 - alpha/P, Bonferroni over the P model pairs; 1 - alpha without "
    "adjustment) excludes 0 on the flipped side. A variant is unstable when it has at least "
    "one significant flip, or when the upper end of the (1 - alpha) interval of Kendall tau-b "
    "between its model means and the base's is below tau_threshold; otherwise stable."
)


def _aligned_sums(
    clusters: list[str],
    labels: list[str],
    cluster_col: StrArray,
    label_col: StrArray,
    values: FloatArray,
) -> ClusterSums:
    """Per-cluster sums over a fixed cluster and label order (zeros where absent)."""
    ci = {c: i for i, c in enumerate(clusters)}
    li = {m: i for i, m in enumerate(labels)}
    keep = np.isfinite(values)
    rows = np.array([ci[c] for c in cluster_col[keep]], dtype=np.int64)
    cols = np.array([li[m] for m in label_col[keep]], dtype=np.int64)
    C, M = len(clusters), len(labels)
    flat = rows * M + cols
    sums = np.bincount(flat, weights=values[keep], minlength=C * M).reshape(C, M).astype(np.float64)
    counts = np.bincount(flat, minlength=C * M).reshape(C, M).astype(np.float64)
    return ClusterSums(list(clusters), list(labels), sums, counts)


def _subset(sums: ClusterSums, labels: list[str]) -> ClusterSums:
    cols = [sums.labels.index(m) for m in labels]
    return ClusterSums(sums.clusters, labels, sums.sums[:, cols], sums.counts[:, cols])


def _metric(
    name: str,
    estimate: float | None,
    reps: FloatArray,
    *,
    level: float,
    B: int,
    seed: int,
    n_clusters: int,
    n: int,
) -> Metric:
    """A percentile-interval Metric from paired replicates."""
    ends = interval_endpoints(estimate, reps, level=level, method="percentile")
    return Metric(
        name=name,
        estimate=estimate,
        lower=ends.lower,
        upper=ends.upper,
        level=level,
        method=ends.method,
        requested_method="percentile",
        B=B,
        seed=seed,
        n_clusters=n_clusters,
        n=n,
        mc_error_lower=ends.mc_error_lower,
        mc_error_upper=ends.mc_error_upper,
        n_undefined_replicates=ends.n_undefined,
        undefined_reason=None if estimate is not None else "no scores",
    )


class _Variant:
    """One variant's sums, estimates and replicates over the full model list (NaN = absent)."""

    def __init__(
        self,
        name: str,
        sums: ClusterSums,
        W: FloatArray,
        *,
        level: float,
        seed: int,
        method: IntervalMethod,
    ) -> None:
        self.name = name
        self.sums = sums
        models = sums.labels
        present = [m for j, m in enumerate(models) if sums.counts[:, j].sum() > 0]
        self.present = present
        self.theta = np.full(len(models), np.nan)
        self.reps = np.full((len(W), len(models)), np.nan)
        self.boot: PairedBootstrapResult | None = None
        if present:
            sub = _subset(sums, present)
            self.boot = paired_cluster_bootstrap(
                sub, weights=W, level=level, seed=seed, method=method
            )
            cols = [models.index(m) for m in present]
            self.theta[cols] = sub.estimate
            self.reps[:, cols] = self.boot.replicates
        self.n_scores = int(sums.counts.sum())


def _ranking(
    var: _Variant,
    base: _Variant | None,
    *,
    level: float,
    B: int,
    seed: int,
    rank_sets: bool,
) -> VariantRanking:
    models = var.sums.labels
    C = len(var.sums.clusters)
    finite = np.isfinite(var.theta)
    ranks = np.full(len(models), np.nan)
    ranks[finite] = ranks_of(var.theta[finite])
    sets: dict[str, tuple[int, int]] = {}
    if rank_sets and var.boot is not None and len(var.present) >= 2:
        rs = rank_confidence_sets(
            var.boot.estimates,
            np.asarray(var.boot.covariance_closed_form),
            var.present,
            kind="simultaneous",
            level=level,
            n_draws=20_000,
            seed=seed,
        )
        sets = {m: (lo, hi) for m, lo, hi in zip(rs.labels, rs.lower, rs.upper, strict=True)}
    metrics = {} if var.boot is None else dict(zip(var.present, var.boot.means, strict=True))
    rows: list[ModelScore] = []
    for j, m in enumerate(models):
        score = metrics.get(m) or Metric(
            name=f"mean[{m}]", estimate=None, undefined_reason="no scores"
        )
        shift = None
        if base is not None:
            est = var.theta[j] - base.theta[j]
            shift = _metric(
                f"shift[{m}]",
                float(est) if np.isfinite(est) else None,
                var.reps[:, j] - base.reps[:, j],
                level=level,
                B=B,
                seed=seed,
                n_clusters=C,
                n=int(var.sums.counts[:, j].sum()),
            )
        rows.append(
            ModelScore(
                model=m,
                score=score,
                rank=int(ranks[j]) if np.isfinite(ranks[j]) else None,
                rank_set=sets.get(m),
                shift=shift,
            )
        )
    rows.sort(key=lambda r: (r.rank is None, r.rank or 0, r.model))
    tau = None
    if base is not None:
        both = np.isfinite(var.theta) & np.isfinite(base.theta)
        est = (
            tau_b_rows(base.theta[None, both], var.theta[None, both])[0]
            if both.sum() >= 2
            else np.nan
        )
        reps = (
            tau_b_rows(base.reps[:, both], var.reps[:, both])
            if both.sum() >= 2
            else np.full(B, np.nan)
        )
        tau = _metric(
            "kendall_tau_b_vs_base",
            float(est) if np.isfinite(est) else None,
            reps,
            level=level,
            B=B,
            seed=seed,
            n_clusters=C,
            n=int(both.sum()),
        )
    return VariantRanking(
        variant=var.name,
        models=rows,
        tau=tau,
        n_scores=var.n_scores,
        n_missing=0,
    )


def _pairs(
    var: _Variant, base: _Variant, *, pair_level: float, B: int, seed: int
) -> list[PairComparison]:
    models = var.sums.labels
    C = len(var.sums.clusters)
    out: list[PairComparison] = []
    for j in range(len(models)):
        for k in range(j + 1, len(models)):
            db = base.theta[j] - base.theta[k]
            dv = var.theta[j] - var.theta[k]
            if not (np.isfinite(db) and np.isfinite(dv)):
                continue
            a, b = (j, k) if db >= 0 else (k, j)
            sign = 1.0 if db >= 0 else -1.0
            rb = sign * (base.reps[:, j] - base.reps[:, k])
            rv = sign * (var.reps[:, j] - var.reps[:, k])
            eb = interval_endpoints(float(sign * db), rb, level=pair_level, method="percentile")
            ev = interval_endpoints(float(sign * dv), rv, level=pair_level, method="percentile")
            change = _metric(
                f"change[{models[a]}-{models[b]}]",
                float(sign * (dv - db)),
                rv - rb,
                level=pair_level,
                B=B,
                seed=seed,
                n_clusters=C,
                n=int(var.sums.counts[:, [j, k]].sum()),
            )
            base_d, var_d = float(sign * db), float(sign * dv)
            flipped = base_d > 0 and var_d < 0
            inside = flipped and (
                (eb.lower is None or eb.lower <= 0) or (ev.upper is None or ev.upper >= 0)
            )
            significant = flipped and ev.upper is not None and ev.upper < 0
            out.append(
                PairComparison(
                    variant=var.name,
                    model_a=models[a],
                    model_b=models[b],
                    base_diff=base_d,
                    base_lower=eb.lower,
                    base_upper=eb.upper,
                    variant_diff=var_d,
                    variant_lower=ev.lower,
                    variant_upper=ev.upper,
                    change=change,
                    flipped=flipped,
                    inside_intervals=inside,
                    significant=significant,
                )
            )
    return out


def _criterion_shifts(
    criteria: CriterionTable,
    clusters: list[str],
    base: str,
    variants: list[str],
    W: FloatArray,
    *,
    level: float,
    seed: int,
) -> list[CriterionShift]:
    """Per variant and shared criterion: pooled normalised mean minus the base's."""
    from attune_judge.calibration._bootstrap import ratio_replicates

    names = sorted(set(criteria.criterion.tolist()))
    per: dict[str, ClusterSums] = {}
    for v in dict.fromkeys([base, *variants]):
        mask = criteria.variant == v
        per[v] = _aligned_sums(
            clusters,
            names,
            criteria.conversation[mask],
            criteria.criterion[mask],
            criteria.score[mask],
        )
    base_sums = per[base]
    base_reps = ratio_replicates(base_sums, W)
    out: list[CriterionShift] = []
    for v in variants:
        if v == base:
            continue
        reps = ratio_replicates(per[v], W)
        for i, name in enumerate(names):
            nb, nv = base_sums.counts[:, i].sum(), per[v].counts[:, i].sum()
            if nb == 0 or nv == 0:
                continue
            bm = float(base_sums.sums[:, i].sum() / nb)
            vm = float(per[v].sums[:, i].sum() / nv)
            out.append(
                CriterionShift(
                    variant=v,
                    criterion=name,
                    base_mean=bm,
                    variant_mean=vm,
                    shift=_metric(
                        f"criterion_shift[{name}]",
                        vm - bm,
                        reps[:, i] - base_reps[:, i],
                        level=level,
                        B=len(W),
                        seed=seed,
                        n_clusters=len(clusters),
                        n=int(nv),
                    ),
                )
            )
    return out


def _verdict(
    ranking: VariantRanking, pairs: list[PairComparison], tau_threshold: float
) -> VariantVerdict:
    flips = [p for p in pairs if p.flipped]
    significant = [p for p in flips if p.significant]
    reasons = [
        f"{p.model_b} now above {p.model_a} (difference {p.variant_diff:+.3f}, interval "
        f"[{p.variant_lower:.3f}, {p.variant_upper:.3f}] excludes 0)"
        for p in significant
    ]
    tau = ranking.tau
    tau_upper = None if tau is None else tau.upper
    if tau_upper is not None and tau_upper < tau_threshold:
        reasons.append(f"Kendall tau upper bound {tau_upper:.3f} < threshold {tau_threshold}")
    return VariantVerdict(
        variant=ranking.variant,
        stable=not reasons,
        reasons=reasons,
        n_flips=len(flips),
        n_significant_flips=len(significant),
        tau=None if tau is None else tau.estimate,
        tau_upper=tau_upper,
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
    B: int = 2_000,
    seed: int = 0,
    method: IntervalMethod = "bca",
    rank_sets: bool = True,
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
        Interval method of the model means (``bca`` with percentile fallback, or
        ``percentile``); differences, shifts and τ always use percentile intervals.
    rank_sets
        Whether to compute simultaneous confidence sets for ranks per variant.

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
    per: dict[str, _Variant] = {}
    for v in variants:
        mask = scores.variant == v
        sums = _aligned_sums(
            clusters, models, scores.conversation[mask], scores.model[mask], scores.score[mask]
        )
        per[v] = _Variant(v, sums, W, level=level, seed=seed, method=method)
    rankings: list[VariantRanking] = []
    pairs: list[PairComparison] = []
    verdicts: list[VariantVerdict] = []
    for v in variants:
        is_base = v == base
        rk = _ranking(
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
            ps = _pairs(per[v], per[base], pair_level=pair_level, B=B, seed=seed)
            pairs.extend(ps)
            verdicts.append(_verdict(rk, ps, tau_threshold))
    shifts = (
        _criterion_shifts(criteria, clusters, base, variants, W, level=level, seed=seed)
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
    )
