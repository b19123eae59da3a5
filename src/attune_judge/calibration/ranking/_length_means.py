"""Length-controlled means for rated (Likert, checklist) runs.

Scores are regressed on the model and the reply's length,

    score_r = μ_m(r) + λ · x_r,   x_r = (len_r − ref_r) / 100

with ``ref_r`` the length of the conversation's reference (or participant-preferred) reply
where there is one, else the mean length of all replies (the lengths centred). The controlled
mean μ_m is the model's expected score at the reference length (x = 0); the raw means are
reported beside. Least squares; intervals from a cluster bootstrap over conversations
(percentile, every replicate refitted: the normal equations for all replicates at once), rank
sets from the bootstrap covariance. As for every control: a model whose replies are better
*because* they are longer loses that credit.

With the scores' scale known (``bounds``), a controlled mean's interval is kept on it: the raw
means' percentile intervals cannot leave it (every replicate is a mean of scores), but the
controlled mean is a prediction of the linear model, which can extrapolate past a bound; a
model whose controlled mean itself lies outside the scale is named in a warning.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import Metric, ResultModel
from attune_judge.calibration.ranking._ranksets import (
    RankSets,
    no_rank_claims,
    rank_confidence_sets,
)
from attune_judge.calibration.resampling._bootstrap import (
    MIN_CLUSTERS,
    FloatArray,
    bootstrap_weights,
    few_clusters_warning,
)
from attune_judge.calibration.resampling._intervals import percentile_metric
from attune_judge.errors import UserError

__all__ = ["LengthControlledMeans", "length_controlled_means"]


class LengthControlledMeans(ResultModel):
    """Controlled means at the reference length, the length slope, raw means beside."""

    labels: list[str]
    """Models (sorted)."""
    controlled: list[Metric]
    """μ_m: the expected score at the reference length, with interval."""
    raw: list[Metric]
    """Raw mean score, with interval."""
    length_slope: Metric
    """λ: change in score per 100 characters."""
    reference: str
    """``reference`` (lengths relative to each conversation's reference reply) or
    ``centred`` (relative to the mean length)."""
    mean_length_difference: list[float]
    """Each model's mean x · 100 (characters longer than the reference)."""
    rank_sets_controlled: RankSets
    """Simultaneous rank sets of the controlled means."""
    rank_sets_raw: RankSets
    """Simultaneous rank sets of the raw means."""
    n: int
    """Scores used."""
    n_clusters: int
    """Conversations resampled."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats that limit what may be claimed."""


def _solve(W: FloatArray, D: FloatArray, y: FloatArray) -> FloatArray:
    """Weighted least squares for every row of ``W`` (B, n): (B, d)."""
    G = np.einsum("bn,ni,nj->bij", W, D, D)
    r = W @ (D * y[:, None])
    out = np.full(r.shape, np.nan)
    ok = np.linalg.matrix_rank(G) == D.shape[1]
    if ok.any():
        out[ok] = np.linalg.solve(G[ok], r[ok][:, :, None])[:, :, 0]
    return out


def length_controlled_means(
    models: Sequence[str],
    clusters: Sequence[object],
    scores: Sequence[float],
    lengths: Sequence[float],
    reference_lengths: Sequence[float | None] | None = None,
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    bounds: tuple[float, float] | None = None,
) -> LengthControlledMeans:
    """Length-controlled means (module notes). ``reference_lengths``: per score, the length
    of its conversation's reference reply (``None`` for none); when no score has one, the
    lengths are centred. ``bounds``: the scores' scale (LOW, HIGH), which the controlled
    means' intervals keep to.

    Raises
    ------
    UserError
        Fewer than two conversations, a model with fewer than two scores, no length
        variation beyond what the model explains, or non-finite input.
    """
    n = len(models)
    if not (n == len(clusters) == len(scores) == len(lengths)):
        raise ValueError("models, clusters, scores and lengths must have the same length")
    if n == 0:
        raise UserError("length-controlled means: no scores")
    y = np.asarray(scores, dtype=np.float64)
    L = np.asarray(lengths, dtype=np.float64)
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(L))):
        raise UserError("length-controlled means: scores and lengths must be finite numbers")
    refs = list(reference_lengths) if reference_lengths is not None else [None] * n
    has_ref = any(r is not None for r in refs)
    if has_ref and any(r is None for r in refs):
        raise UserError(
            "length-controlled means: some scores have a reference reply and some do not; "
            "give every one a reference length, or none (centred)"
        )
    ref = np.asarray(refs, dtype=np.float64) if has_ref else np.full(n, L.mean())
    x = (L - ref) / 100
    names = sorted({str(m) for m in models})
    mi = {m: k for k, m in enumerate(names)}
    M = np.array([mi[str(m)] for m in models])
    p = len(names)
    counts = np.bincount(M, minlength=p)
    if (counts < 2).any():
        k = int(np.argmin(counts))
        raise UserError(
            f"length-controlled means: model {names[k]!r} has {int(counts[k])} score; needs at "
            "least two"
        )
    cl_names = sorted({str(c) for c in clusters})
    if len(cl_names) < 2:
        raise UserError("length-controlled means: needs scores from at least two conversations")
    ci = {c: k for k, c in enumerate(cl_names)}
    cl = np.array([ci[str(c)] for c in clusters])
    D = np.zeros((n, p + 1))
    D[np.arange(n), M] = 1.0
    D[:, p] = x
    if np.linalg.matrix_rank(D) < p + 1:
        raise UserError(
            "length-controlled means: the replies' lengths do not vary beyond what the model "
            "explains (every reply of a model as long as the others): no length effect to "
            "control for"
        )
    est = _solve(np.ones((1, n)), D, y)[0]
    W = bootstrap_weights(len(cl_names), B, seed)[:, cl]
    reps = _solve(W, D, y)
    raw_est = np.array([y[M == k].mean() for k in range(p)])
    with np.errstate(invalid="ignore", divide="ignore"):
        raw_reps = np.stack(
            [(W[:, M == k] @ y[M == k]) / W[:, M == k].sum(1) for k in range(p)], axis=1
        )

    def metric(name: str, e: float, r: FloatArray, count: int) -> Metric:
        return percentile_metric(
            name, e, r, level=level, B=B, seed=seed, n_clusters=len(cl_names), n=count
        )

    def sets(e: FloatArray, r: FloatArray) -> RankSets:
        good = r[np.all(np.isfinite(r), axis=1)]
        cov = np.cov(good, rowvar=False).reshape(p, p) if len(good) > 1 else np.zeros((p, p))
        return rank_confidence_sets(e, cov, names, kind="simultaneous", level=level, seed=seed)

    claims = len(cl_names) >= MIN_CLUSTERS
    none = no_rank_claims(names, level, seed)[0]
    controlled = [
        metric(f"controlled_mean[{m}]", float(est[k]), reps[:, k], int(counts[k]))
        for k, m in enumerate(names)
    ]
    warnings = [w for w in [few_clusters_warning(len(cl_names))] if w]
    if bounds is not None:
        lo, hi = bounds
        for k, c in enumerate(controlled):
            if c.lower is not None and c.upper is not None:
                controlled[k] = c.model_copy(
                    update={"lower": min(max(c.lower, lo), hi), "upper": max(min(c.upper, hi), lo)}
                )
            if not lo <= est[k] <= hi:
                warnings.append(
                    f"{names[k]}: the controlled mean {est[k]:.3f} lies outside the scale "
                    f"{lo:g}-{hi:g} (the linear length model extrapolates there); its interval "
                    "is kept on the scale"
                )
    return LengthControlledMeans(
        labels=names,
        controlled=controlled,
        raw=[
            metric(f"raw_mean[{m}]", float(raw_est[k]), raw_reps[:, k], int(counts[k]))
            for k, m in enumerate(names)
        ],
        length_slope=metric("length_slope_per_100_chars", float(est[p]), reps[:, p], n),
        reference="reference" if has_ref else "centred",
        mean_length_difference=[float(100 * x[M == k].mean()) for k in range(p)],
        rank_sets_controlled=sets(est[:p], reps[:, :p]) if claims else none,
        rank_sets_raw=sets(raw_est, raw_reps) if claims else none,
        n=n,
        n_clusters=len(cl_names),
        warnings=warnings,
    )
