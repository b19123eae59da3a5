"""Agreement between rankings: Kendall τ-b of two leaderboards, Kendall's W of several."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic
from attune_judge.calibration.resampling._ratio import ClusterSums, ratio_replicates
from attune_judge.errors import UserError

__all__ = [
    "KendallW",
    "KendallWInterval",
    "kendall_tau_rankings",
    "kendalls_w",
    "kendalls_w_rankings",
    "tau_b_rows",
]


def tau_b_rows(a: FloatArray, b: FloatArray) -> FloatArray:
    """Kendall τ-b between the columns of each row of ``a`` and ``b`` (shape (k, p))."""
    p = a.shape[1]
    J, K = np.triu_indices(p, 1)
    sa = np.sign(a[:, J] - a[:, K])
    sb = np.sign(b[:, J] - b[:, K])
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.sum(sa * sb, axis=1) / np.sqrt(np.sum(sa**2, axis=1) * np.sum(sb**2, axis=1))
    return np.asarray(out, dtype=np.float64)


def _align(a: ClusterSums, b: ClusterSums) -> tuple[list[str], ClusterSums, ClusterSums]:
    labels, (ea, eb) = _align_many([a, b])
    return labels, ea, eb


def _align_many(tables: Sequence[ClusterSums]) -> tuple[list[str], list[ClusterSums]]:
    """The tables restricted to their common labels (sorted) over the union of clusters."""
    labels = sorted(set.intersection(*(set(t.labels) for t in tables)))
    if len(labels) < 2:
        which = "two rankings" if len(tables) == 2 else "rankings"
        raise UserError(f"the {which} share fewer than two models; nothing to compare")
    clusters = sorted(set().union(*(t.clusters for t in tables)))
    ci = {c: i for i, c in enumerate(clusters)}

    def expand(s: ClusterSums) -> ClusterSums:
        S = np.zeros((len(clusters), len(labels)))
        N = np.zeros_like(S)
        rows = [ci[c] for c in s.clusters]
        cols = [s.labels.index(m) for m in labels]
        S[rows] = s.sums[:, cols]
        N[rows] = s.counts[:, cols]
        return ClusterSums(clusters, labels, S, N)

    return labels, [expand(t) for t in tables]


def kendall_tau_rankings(
    a: ClusterSums,
    b: ClusterSums,
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> Metric:
    """Kendall τ-b between the model means of two score tables, with a paired interval.

    Both tables are re-weighted with the same cluster draw (clusters matched by id), so
    the interval reflects the sampling of conversations shared by the two rankings. Only the
    models present in both tables are compared.
    """
    labels, A, Bs = _align(a, b)

    def stat(w: FloatArray) -> FloatArray:
        return tau_b_rows(ratio_replicates(A, w), ratio_replicates(Bs, w))

    return bootstrap_statistic(
        stat,
        len(A.clusters),
        name="kendall_tau_b_rankings",
        B=B,
        level=level,
        seed=seed,
        method=method,
        n=len(labels),
        batch=2_000,
    )


class KendallW(ResultModel):
    """Kendall's coefficient of concordance W across several rankings."""

    w: float | None
    """W in [0, 1] (tie-corrected); ``None`` when undefined (all objects tied everywhere)."""
    chi2: float | None
    """Friedman statistic ``m (n − 1) W``."""
    df: int
    """Degrees of freedom ``n − 1``."""
    p_value: float | None
    """Chi-square approximation p-value."""
    m: int
    """Number of rankings (raters)."""
    n: int
    """Number of objects ranked."""


def kendalls_w(scores: Sequence[Sequence[float]] | FloatArray) -> KendallW:
    """Kendall's W of an ``m × n`` matrix (one row per ranking; higher score = better).

    Scores are converted to mid-ranks per row, and the tie correction
    ``W = 12 S / (m² (n³ − n) − m Σ T)`` with ``T = Σ (t³ − t)`` over tie groups is applied.
    """
    from scipy import stats

    X = np.asarray(scores, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 2:
        raise UserError("Kendall's W needs at least two rankings of at least two objects")
    if not np.all(np.isfinite(X)):
        raise UserError("Kendall's W needs complete rankings (no missing scores)")
    m, n = X.shape
    R = np.vstack([stats.rankdata(row) for row in X])
    T = 0.0
    for row in X:
        _, counts = np.unique(row, return_counts=True)
        T += float(np.sum(counts**3 - counts))
    S = float(np.sum((R.sum(0) - m * (n + 1) / 2) ** 2))
    denom = m**2 * (n**3 - n) - m * T
    if denom <= 0:
        return KendallW(w=None, chi2=None, df=n - 1, p_value=None, m=m, n=n)
    w = 12 * S / denom
    chi2 = m * (n - 1) * w
    return KendallW(w=w, chi2=chi2, df=n - 1, p_value=float(stats.chi2.sf(chi2, n - 1)), m=m, n=n)


class KendallWInterval(ResultModel):
    """Kendall's W of several rankings of the same models, with a cluster-bootstrap interval."""

    rankings: list[str]
    """Names of the rankings (score tables), in the order given."""
    models: list[str]
    """The models ranked: those present in every table (sorted)."""
    point: KendallW
    """W of the point-estimate means."""
    interval: Metric
    """``point.w`` with its cluster-bootstrap interval (``name="kendalls_w"``)."""


def kendalls_w_rankings(
    tables: Mapping[str, ClusterSums],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "percentile",
) -> KendallWInterval:
    """Kendall's W of the model means of several score tables, with a paired interval.

    Every table is re-weighted by the same cluster draw (clusters matched by id; a cluster
    missing from a table has zero counts there), so the interval reflects the sampling of the
    conversations the rankings share. Only models present in every table are ranked. A
    replicate in which a model has no observation in some table is undefined (NaN, counted).

    Parameters
    ----------
    tables
        Ranking name → per-cluster sums of that ranking's scores (e.g. one table per task).
    B, level, seed, method
        Replicates, confidence level, seed of the cluster weights (the draw equals
        ``bootstrap_weights(C, B, seed)`` over the sorted union of clusters), interval method
        (percentile by default: W lives in [0, 1] and is often near a boundary).

    Raises
    ------
    UserError
        Fewer than two tables, fewer than two common models, or a model mean undefined.
    """
    names = list(tables)
    if len(names) < 2:
        raise UserError("Kendall's W needs at least two rankings")
    models, aligned = _align_many([tables[t] for t in names])
    point = kendalls_w(np.vstack([t.estimate for t in aligned]))

    def stat(w: FloatArray) -> FloatArray:
        reps = np.stack([ratio_replicates(t, w) for t in aligned], axis=1)  # (k, T, M)
        out = np.full(len(w), np.nan)
        for i, mat in enumerate(reps):
            if np.all(np.isfinite(mat)):
                value = kendalls_w(mat).w
                out[i] = np.nan if value is None else value
        return out

    interval = bootstrap_statistic(
        stat,
        len(aligned[0].clusters),
        name="kendalls_w",
        B=B,
        seed=seed,
        level=level,
        method=method,
        n=len(names),
        engine="loop",
    )
    return KendallWInterval(rankings=names, models=models, point=point, interval=interval)
