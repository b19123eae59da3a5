"""Paired comparisons of variants: per-variant means on shared weights, τ, pairs, shifts.

Every function here works on one ``(B × C)`` matrix of conversation weights shared by all
variants and models, so every difference (between models, between variants) is paired.
"""

from __future__ import annotations

import numpy as np

from attune_judge.calibration import (
    ClusterSums,
    CriterionShift,
    IntervalMethod,
    Metric,
    ModelScore,
    PairComparison,
    PairedBootstrapResult,
    VariantRanking,
    difference_intervals,
    interval_endpoints,
    paired_cluster_bootstrap,
    rank_confidence_sets,
    ranks_of,
    ratio_replicates,
    tau_b_rows,
)
from attune_judge.sensitivity._table import CriterionTable, FloatArray, StrArray

__all__ = ["VariantBoot", "aligned_sums", "criterion_shifts", "pair_comparisons", "ranking"]


def aligned_sums(
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
        **ends.metric_fields(),
        level=level,
        requested_method="percentile",
        B=B,
        seed=seed,
        n_clusters=n_clusters,
        n=n,
        undefined_reason=None if estimate is not None else "no scores",
    )


class VariantBoot:
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
        bounds: tuple[float, float] | None = None,
    ) -> None:
        self.name = name
        self.sums = sums
        self.W = W
        self.level = level
        models = sums.labels
        present = [m for j, m in enumerate(models) if sums.counts[:, j].sum() > 0]
        self.present = present
        self.theta = np.full(len(models), np.nan)
        self.reps = np.full((len(W), len(models)), np.nan)
        self.boot: PairedBootstrapResult | None = None
        if present:
            sub = _subset(sums, present)
            self.boot = paired_cluster_bootstrap(
                sub, weights=W, level=level, seed=seed, method=method, bounds=bounds
            )
            cols = [models.index(m) for m in present]
            self.theta[cols] = sub.estimate
            self.reps[:, cols] = self.boot.replicates
        self.n_scores = int(sums.counts.sum())


def ranking(
    var: VariantBoot,
    base: VariantBoot | None,
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


def pair_comparisons(
    var: VariantBoot, base: VariantBoot, *, pair_level: float, B: int, seed: int
) -> list[PairComparison]:
    models = var.sums.labels
    C = len(var.sums.clusters)
    out: list[PairComparison] = []
    oriented: list[tuple[int, int, int, int]] = []  # (j, k, a, b): a is ahead in the base
    for j in range(len(models)):
        for k in range(j + 1, len(models)):
            db = base.theta[j] - base.theta[k]
            dv = var.theta[j] - var.theta[k]
            if not (np.isfinite(db) and np.isfinite(dv)):
                continue
            oriented.append((j, k, *((j, k) if db >= 0 else (k, j))))
    # studentized paired intervals of the oriented differences (issue 17: the percentile
    # interval under-covers with few conversations)
    ab = [(a, b) for _, _, a, b in oriented]
    base_int = difference_intervals(base.sums, ab, weights=base.W, level=pair_level, seed=seed)
    var_int = difference_intervals(var.sums, ab, weights=var.W, level=pair_level, seed=seed)
    for (j, k, a, b), eb, ev in zip(oriented, base_int, var_int, strict=True):
        db = base.theta[j] - base.theta[k]
        dv = var.theta[j] - var.theta[k]
        sign = 1.0 if db >= 0 else -1.0
        rb = sign * (base.reps[:, j] - base.reps[:, k])
        rv = sign * (var.reps[:, j] - var.reps[:, k])
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


def criterion_shifts(
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
    names = sorted(set(criteria.criterion.tolist()))
    per: dict[str, ClusterSums] = {}
    for v in dict.fromkeys([base, *variants]):
        mask = criteria.variant == v
        per[v] = aligned_sums(
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
