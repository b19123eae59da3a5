"""Paired cluster bootstrap: one weights matrix, per-cluster sums, all replicates in one product.

Resampling unit is the cluster (a conversation): a replicate draws cluster weights
``w ~ Multinomial(C, 1/C)`` (or Poisson(1)) and *every* model or rater is evaluated on the same
draw, so differences between models keep their covariance (a paired bootstrap). A ratio estimator
``θ*_m = Σ_c w_c S_cm / Σ_c w_c n_cm`` turns per-cluster sums into replicate means; all ``B``
replicates are the product ``(B × C) @ (C × M)``.

Intervals are percentile or BCa (bias-corrected and accelerated, Efron 1987; acceleration from
the jackknife over clusters). BCa falls back to percentile when it is undefined (all replicates
on one side of the estimate, constant replicates, undefined jackknife values); the method that
was actually used is recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from attune_judge.calibration._results import IntervalMethod, Metric

__all__ = [
    "MAX_UNDEFINED_SHARE",
    "MIN_CLUSTERS",
    "ClusterSums",
    "Endpoints",
    "bootstrap_statistic",
    "bootstrap_weights",
    "cluster_robust_covariance",
    "few_clusters_warning",
    "interval_endpoints",
    "iter_bootstrap_weights",
    "join_notes",
    "per_replicate",
    "ratio_replicate_variances",
    "ratio_replicates",
    "studentized_endpoints",
]

FloatArray = NDArray[np.float64]

DEGENERATE = "no interval: degenerate replicates"
"""Note of a studentized interval whose ``|t*|`` quantile is infinite."""

MAX_UNDEFINED_SHARE = 0.10
"""Largest share of undefined bootstrap replicates with which an interval is still reported.

Replicates on which a statistic is undefined (a correlation of a resample with no variation,
α of a resample without pairable values ...) are dropped before taking quantiles; the interval
then describes only the draws where the statistic exists and is too narrow. Up to this share the
interval is reported with a note giving the share; above it no interval is reported."""
Scheme = str
# a statistic evaluated on a (k × C) matrix of cluster weights, one value per row
WeightedStatistic = Callable[[FloatArray], FloatArray]


def bootstrap_weights(
    n_clusters: int, B: int = 10_000, seed: int = 0, scheme: Scheme = "multinomial"
) -> FloatArray:
    """Draw the ``(B × C)`` cluster-weights matrix.

    Parameters
    ----------
    n_clusters
        Number of clusters ``C``.
    B
        Number of replicates.
    seed
        Seed of ``numpy.random.default_rng``; the same seed gives the same matrix.
    scheme
        ``multinomial``: each row is Multinomial(C, 1/C) (C clusters drawn with replacement);
        ``poisson``: independent Poisson(1) weights (for streaming data).

    Returns
    -------
    numpy.ndarray
        Float matrix of shape ``(B, C)``.
    """
    return np.concatenate(list(iter_bootstrap_weights(n_clusters, B, seed, scheme)))


def iter_bootstrap_weights(
    n_clusters: int,
    B: int = 10_000,
    seed: int = 0,
    scheme: Scheme = "multinomial",
    chunk_cells: int = 4_000_000,
) -> Iterator[FloatArray]:
    """The rows of ``bootstrap_weights`` in blocks of about ``chunk_cells`` cells.

    One generator draws the blocks in sequence, so for a given seed the rows are the same
    whatever the memory budget; use it when ``B × C`` is too large to hold at once.
    """
    if n_clusters < 1 or B < 1:
        raise ValueError("bootstrap_weights needs n_clusters >= 1 and B >= 1")
    if scheme not in ("multinomial", "poisson"):
        raise ValueError(f"unknown weight scheme {scheme!r} (multinomial or poisson)")
    rng = np.random.default_rng(seed)
    rows = max(1, chunk_cells // n_clusters)
    for start in range(0, B, rows):
        b = min(rows, B - start)
        if scheme == "poisson":
            yield rng.poisson(1.0, size=(b, n_clusters)).astype(np.float64)
            continue
        # C draws with replacement per row == Multinomial(C, 1/C) counts
        small = b * n_clusters < 2**31 - 1
        draws: NDArray[np.integer] = rng.integers(
            0, n_clusters, size=(b, n_clusters), dtype=np.int32 if small else np.int64
        )
        offsets: NDArray[np.integer] = np.arange(b, dtype=draws.dtype)[:, None] * n_clusters
        counts = np.bincount((draws + offsets).ravel(), minlength=b * n_clusters)
        yield counts.reshape(b, n_clusters).astype(np.float64)


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
        return cls([str(c) for c in cluster_names], [str(m) for m in label_names], sums, counts)

    @property
    def estimate(self) -> FloatArray:
        """Overall mean per label, ``Σ_c S_cm / Σ_c n_cm``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(self.sums.sum(0) / self.counts.sum(0), dtype=np.float64)

    def jackknife(self) -> FloatArray:
        """Leave-one-cluster-out ratio estimates, shape (C, M); NaN where undefined."""
        num = self.sums.sum(0)[None, :] - self.sums
        den = self.counts.sum(0)[None, :] - self.counts
        with np.errstate(invalid="ignore", divide="ignore"):
            out = num / den
        out[den <= 0] = np.nan
        return np.asarray(out, dtype=np.float64)


MIN_CLUSTERS = 10
"""Fewest clusters (conversations) for which intervals and rank claims are supported.

Seeded simulations (``tests/calibration/test_coverage.py``; numbers in STATISTICS notes of the
README) show the default interval for means — the symmetric studentized cluster bootstrap —
covering 93–97% at 10 and 15 clusters, and percentile/BCa intervals 87–91% there. Below
``MIN_CLUSTERS`` no method was validated: every command warns, and rank claims (rank sets,
tiers) are refused."""


def few_clusters_warning(n_clusters: int, what: str = "conversations") -> str | None:
    """The warning printed below :data:`MIN_CLUSTERS` clusters, else ``None``."""
    if n_clusters >= MIN_CLUSTERS:
        return None
    return (
        f"only {n_clusters} {what} (clusters): intervals are unreliable below {MIN_CLUSTERS} "
        "(their coverage was validated from 10 up) and no rank claims are made"
    )


def ratio_replicate_variances(
    sums: ClusterSums, weights: FloatArray, reps: FloatArray | None = None
) -> FloatArray:
    """Cluster-robust variance of each replicate's ratio estimate, shape (B, M).

    For replicate weights w: ``Σ_c w_c (S_cm − θ*_m n_cm)² / (Σ_c w_c n_cm)² · C/(C−1)``
    (each drawn copy of a cluster counts as a cluster). At ``w = 1`` this is the diagonal of
    :func:`cluster_robust_covariance`. Three matrix products, no per-replicate loop.
    """
    C = len(sums.clusters)
    if reps is None:
        reps = ratio_replicates(sums, weights)
    S, n = sums.sums, sums.counts
    den = weights @ n
    with np.errstate(invalid="ignore", divide="ignore"):
        v = weights @ (S * S) - 2 * reps * (weights @ (S * n)) + reps**2 * (weights @ (n * n))
        v = v / den**2 * (C / max(C - 1, 1))
    v[den <= 0] = np.nan
    return np.asarray(np.clip(v, 0, None), dtype=np.float64)


def studentized_endpoints(
    estimate: float | None,
    se: float | None,
    tstar: FloatArray,
    *,
    level: float = 0.95,
    max_undefined: float = MAX_UNDEFINED_SHARE,
) -> Endpoints:
    """Symmetric bootstrap-t interval ``θ̂ ± q·SE`` with q the ``level`` quantile of ``|t*|``.

    ``t* = (θ* − θ̂) / SE*`` per replicate, SE* the replicate's own cluster-robust standard
    error; NaN entries (undefined replicates) are dropped and counted as in
    :func:`interval_endpoints`; ±inf (a replicate with zero spread) count as large values.
    """
    t = np.abs(np.asarray(tstar, dtype=np.float64))
    defined = t[~np.isnan(t)]
    n_undef = int(len(t) - len(defined))
    share = n_undef / len(t) if len(t) else 0.0
    if (
        estimate is None
        or se is None
        or not np.isfinite(estimate)
        or not np.isfinite(se)
        or len(defined) == 0
    ):
        return Endpoints(None, None, "none", None, None, n_undef)
    note = None
    if n_undef:
        if share > max_undefined:
            return Endpoints(
                None,
                None,
                "none",
                None,
                None,
                n_undef,
                f"no interval: the statistic is undefined on {n_undef} of {len(t)} bootstrap "
                f"replicates ({share:.0%}, more than {max_undefined:.0%})",
            )
        note = f"{n_undef} of {len(t)} bootstrap replicates ({share:.1%}) undefined and dropped"
    srt = np.sort(defined)
    with np.errstate(invalid="ignore"):
        q = float(np.quantile(srt, level))
    if not np.isfinite(q):
        return Endpoints(None, None, "none", None, None, n_undef, DEGENERATE)
    mc = _order_stat_mc_error(srt, level) * se if np.all(np.isfinite(srt)) else None
    return Endpoints(
        float(estimate - q * se), float(estimate + q * se), "studentized", mc, mc, n_undef, note
    )


def ratio_replicates(sums: ClusterSums, weights: FloatArray) -> FloatArray:
    """All replicates of the ratio estimator: ``(W @ S) / (W @ n)``, shape (B, M).

    A replicate in which a label has no observation is NaN for that label.
    """
    num = weights @ sums.sums
    den = weights @ sums.counts
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    out[den <= 0] = np.nan
    return np.asarray(out, dtype=np.float64)


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


@dataclass(frozen=True)
class Endpoints:
    """Interval endpoints for one statistic, with the method used and Monte-Carlo errors."""

    lower: float | None
    upper: float | None
    method: IntervalMethod
    mc_error_lower: float | None
    mc_error_upper: float | None
    n_undefined: int
    note: str | None = None
    """Why the interval is missing, that replicates were dropped, or that BCa fell back."""


def _order_stat_mc_error(sorted_reps: FloatArray, q: float) -> float:
    """Monte-Carlo SE of the q-quantile of B replicates: half the spread of ±1 binomial SE."""
    B = len(sorted_reps)
    k = q * (B - 1)
    d = np.sqrt(B * q * (1 - q))
    lo = int(np.clip(np.floor(k - d), 0, B - 1))
    hi = int(np.clip(np.ceil(k + d), 0, B - 1))
    return float((sorted_reps[hi] - sorted_reps[lo]) / 2)


def _bca_quantiles(
    estimate: float, reps: FloatArray, jack: FloatArray | None, level: float
) -> tuple[float, float] | str:
    """Adjusted quantile levels of BCa, or why BCa is undefined on this data."""
    if jack is None or len(jack) < 2:
        return "no jackknife (fewer than three clusters)"
    if not np.all(np.isfinite(jack)):
        return "the statistic is undefined when some cluster is left out"
    B = len(reps)
    tie = 1e-12 * max(1.0, abs(estimate))  # replicates equal to θ̂ up to rounding
    p = (np.sum(reps < estimate - tie) + 0.5 * np.sum(np.abs(reps - estimate) <= tie)) / B
    if np.ptp(reps) == 0:
        return "all replicates are equal"
    if p <= 0 or p >= 1:
        return "all replicates lie on one side of the estimate"
    z0 = float(stats.norm.ppf(p))
    dev = jack.mean() - jack
    ss = float(np.sum(dev**2))
    denom = 6 * ss**1.5
    with np.errstate(all="ignore"):
        a = float(np.sum(dev**3) / denom) if denom > 0 else 0.0
    if not np.isfinite(a):
        return "the acceleration is undefined"
    alpha = 1 - level
    out = []
    for z in (stats.norm.ppf(alpha / 2), stats.norm.ppf(1 - alpha / 2)):
        denom = 1 - a * (z0 + z)
        if denom <= 0:
            return "the bias and acceleration are too large"
        out.append(float(stats.norm.cdf(z0 + (z0 + z) / denom)))
    if not all(np.isfinite(out)):
        return "the adjusted quantiles are undefined"
    return out[0], out[1]


def interval_endpoints(
    estimate: float | None,
    reps: FloatArray,
    *,
    level: float = 0.95,
    method: IntervalMethod = "bca",
    jackknife: FloatArray | None = None,
    max_undefined: float = MAX_UNDEFINED_SHARE,
) -> Endpoints:
    """Percentile or BCa endpoints of one statistic from its bootstrap replicates.

    NaN replicates (statistic undefined on that draw) are dropped and counted; when more than
    ``max_undefined`` of them are undefined no interval is given (see
    :data:`MAX_UNDEFINED_SHARE`). BCa falls back to percentile when undefined;
    ``Endpoints.method`` says which was used and ``Endpoints.note`` why.
    """
    reps = np.asarray(reps, dtype=np.float64)
    finite = reps[np.isfinite(reps)]
    n_undef = int(len(reps) - len(finite))
    share = n_undef / len(reps) if len(reps) else 0.0
    if estimate is None or not np.isfinite(estimate) or len(finite) == 0 or method == "none":
        return Endpoints(None, None, "none", None, None, n_undef)
    notes = []
    if n_undef:
        if share > max_undefined:
            return Endpoints(
                None,
                None,
                "none",
                None,
                None,
                n_undef,
                f"no interval: the statistic is undefined on {n_undef} of {len(reps)} bootstrap "
                f"replicates ({share:.0%}, more than {max_undefined:.0%}); an interval from the "
                "others would describe only the draws where it exists",
            )
        notes.append(
            f"{n_undef} of {len(reps)} bootstrap replicates ({share:.1%}) undefined and dropped"
        )
    srt = np.sort(finite)
    alpha = 1 - level
    q_lo, q_hi = alpha / 2, 1 - alpha / 2
    used: IntervalMethod = "percentile"
    if method == "bca":
        adj = _bca_quantiles(float(estimate), finite, jackknife, level)
        if isinstance(adj, str):
            notes.append(f"BCa undefined ({adj}): percentile interval")
        else:
            q_lo, q_hi = adj
            used = "bca"
    lo, hi = np.quantile(srt, [q_lo, q_hi])
    return Endpoints(
        float(lo),
        float(hi),
        used,
        _order_stat_mc_error(srt, q_lo),
        _order_stat_mc_error(srt, q_hi),
        n_undef,
        "; ".join(notes) or None,
    )


def join_notes(*notes: str | None) -> str | None:
    """Non-empty notes joined by ``; `` (``None`` when there are none)."""
    kept = [n for n in notes if n]
    return "; ".join(kept) or None


def _evaluate(stat: WeightedStatistic, weights: FloatArray, batch: int) -> FloatArray:
    """Evaluate a weighted statistic over the rows of ``weights`` in batches."""
    parts = [
        np.asarray(stat(weights[i : i + batch]), dtype=np.float64).reshape(-1)
        for i in range(0, len(weights), batch)
    ]
    return np.concatenate(parts) if parts else np.empty(0)


def bootstrap_statistic(
    stat: WeightedStatistic,
    n_clusters: int,
    *,
    name: str,
    B: int = 2_000,
    level: float = 0.95,
    seed: int = 0,
    scheme: Scheme = "multinomial",
    method: IntervalMethod = "bca",
    n: int = 0,
    batch: int = 500,
    engine: str = "vectorised",
    note: str | None = None,
) -> Metric:
    """Cluster bootstrap of any statistic written as a function of cluster weights.

    Parameters
    ----------
    stat
        Function mapping a ``(k × C)`` weights matrix to ``k`` values (NaN = undefined). The
        point estimate is ``stat(ones((1, C)))``; leave-one-cluster-out rows give the
        jackknife used by BCa.
    n_clusters
        Number of clusters ``C``.
    name, n, engine, note
        Copied into the result.
    B, level, seed, scheme, method
        Number of replicates, confidence level, seed, weight scheme, interval method.
    batch
        Replicates evaluated per call (bounds memory).

    Returns
    -------
    Metric
        Estimate, interval, method used, Monte-Carlo errors.
    """
    if n_clusters < 1:
        return Metric(name=name, estimate=None, undefined_reason="no clusters")
    point = float(_evaluate(stat, np.ones((1, n_clusters)), batch)[0])
    if not np.isfinite(point):
        return Metric(
            name=name,
            estimate=None,
            undefined_reason="the statistic is undefined on these data",
            n_clusters=n_clusters,
            n=n,
            requested_method=method,
        )
    reps = np.concatenate(
        [
            _evaluate(stat, W, batch)
            for W in iter_bootstrap_weights(n_clusters, B, seed, scheme, max(batch, 1) * n_clusters)
        ]
    )
    jack = None
    if method == "bca" and n_clusters >= 3:
        jack = np.concatenate(
            [
                _evaluate(stat, _leave_one_out(n_clusters, i, min(i + batch, n_clusters)), batch)
                for i in range(0, n_clusters, batch)
            ]
        )
    ends = interval_endpoints(point, reps, level=level, method=method, jackknife=jack)
    return Metric(
        name=name,
        estimate=point,
        lower=ends.lower,
        upper=ends.upper,
        level=level,
        method=ends.method,
        requested_method=method,
        B=B,
        seed=seed,
        scheme="poisson" if scheme == "poisson" else "multinomial",
        n_clusters=n_clusters,
        n=n,
        mc_error_lower=ends.mc_error_lower,
        mc_error_upper=ends.mc_error_upper,
        n_undefined_replicates=ends.n_undefined,
        engine="loop" if engine == "loop" else "vectorised",
        note=join_notes(note, ends.note),
    )


def _leave_one_out(n_clusters: int, start: int, stop: int) -> FloatArray:
    """Rows ``start..stop`` of the leave-one-cluster-out weights ``1 − I``."""
    w = np.ones((stop - start, n_clusters))
    w[np.arange(stop - start), np.arange(start, stop)] = 0.0
    return w


def per_replicate(fn: Callable[[FloatArray], float]) -> WeightedStatistic:
    """Wrap a statistic of one weights vector into a (slow) loop over replicate rows."""

    def stat(weights: FloatArray) -> FloatArray:
        return np.array([fn(w) for w in weights], dtype=np.float64)

    return stat
