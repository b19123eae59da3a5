"""Paired cluster bootstrap: one weights matrix, per-cluster sums, all replicates in one product.

Resampling unit is the cluster (a conversation): a replicate draws cluster weights
``w ~ Multinomial(C, 1/C)`` (or Poisson(1)) and *every* model or rater is evaluated on the same
draw, so differences between models keep their covariance (a paired bootstrap). A ratio estimator
``θ*_m = Σ_c w_c S_cm / Σ_c w_c n_cm`` turns per-cluster sums into replicate means; all ``B``
replicates are the product ``(B × C) @ (C × M)``.

The per-cluster sums and the ratio estimator are in :mod:`._ratio`; intervals from the
replicates (percentile, BCa, studentized) are in :mod:`._intervals` and re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import NDArray

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric
from attune_judge.calibration.resampling._intervals import (
    DEGENERATE,
    MAX_UNDEFINED_SHARE,
    ZERO_WIDTH,
    Endpoints,
    FloatArray,
    interval_endpoints,
    is_zero_width,
    join_notes,
    studentized_endpoints,
)

__all__ = [
    "DEGENERATE",
    "MAX_UNDEFINED_SHARE",
    "MIN_CLUSTERS",
    "SINGLE_CLUSTER",
    "Endpoints",
    "FloatArray",
    "bootstrap_statistic",
    "bootstrap_weights",
    "few_clusters_warning",
    "interval_endpoints",
    "iter_bootstrap_weights",
    "join_notes",
    "no_claim_reason",
    "per_replicate",
    "studentized_endpoints",
]

Scheme = str
# a statistic evaluated on a (k × C) matrix of cluster weights, one value per row
WeightedStatistic = Callable[[FloatArray], FloatArray]


def bootstrap_weights(
    n_clusters: int, B: int = DEFAULT_B, seed: int = 0, scheme: Scheme = "multinomial"
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
    parts = list(iter_bootstrap_weights(n_clusters, B, seed, scheme))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def iter_bootstrap_weights(
    n_clusters: int,
    B: int = DEFAULT_B,
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
        else:  # C draws with replacement per row == Multinomial(C, 1/C) counts
            yield _multinomial_counts(rng, b, n_clusters)


_COUNT_BLOCK_CELLS = 1 << 16
"""Draws counted per block: the block's draws and counts stay in the CPU cache."""


def _multinomial_counts(rng: np.random.Generator, b: int, n_clusters: int) -> FloatArray:
    """``b`` rows of Multinomial(C, 1/C) counts: C draws with replacement per row, counted.

    Drawn and counted block by block while in the cache: twice as fast as drawing all, then
    counting all, and the same matrix (an int32/int64 draw takes whole generator outputs, so
    splitting the draws changes nothing).
    """
    out = np.empty((b, n_clusters), dtype=np.float64)
    block = max(1, _COUNT_BLOCK_CELLS // n_clusters)
    small = n_clusters < 2**31 - 1
    offsets: NDArray[np.intp] = np.arange(block, dtype=np.intp)[:, None] * n_clusters
    for start in range(0, b, block):
        k = min(block, b - start)
        draws: NDArray[np.integer] = rng.integers(
            0, n_clusters, size=(k, n_clusters), dtype=np.int32 if small else np.int64
        )
        flat = np.bincount((draws + offsets[:k]).ravel(), minlength=k * n_clusters)
        out[start : start + k] = flat.reshape(k, n_clusters)
    return out


SINGLE_CLUSTER = (
    "no interval: a single conversation (cluster); resampling it always gives the same value"
)
"""Note of a statistic computed from one cluster (an estimate, never an interval)."""

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


def no_claim_reason(
    stat: object, n_clusters: int | None = None, what: str = "conversations"
) -> str | None:
    """Why a statistic makes no ordering claim (rank set, tier, "distinguishable",
    P(rank 1)), or ``None`` when it may: the one rule every ranking applies.

    A claim needs the data behind it: an estimate, an interval, at least
    :data:`MIN_CLUSTERS` clusters (``n_clusters``, default the statistic's own), and an
    interval that shows some uncertainty (a zero-width interval shows none, not certainty).
    A statistic without one is compared with nothing: its rank set is every rank, it has no
    tier of its own, no difference with it is called distinguishable, and it is listed with
    this reason. ``stat`` is a :class:`~attune_judge.calibration.Metric` or anything with
    ``estimate``, ``lower``, ``upper``, ``n_clusters`` (a PPI estimate).
    """
    est = getattr(stat, "estimate", None)
    lower, upper = getattr(stat, "lower", None), getattr(stat, "upper", None)
    note = getattr(stat, "note", None)
    if est is None:
        return "no estimate" + (
            f" ({why})" if (why := getattr(stat, "undefined_reason", None)) else ""
        )
    k = int(getattr(stat, "n_clusters", 0) or 0) if n_clusters is None else n_clusters
    if k < MIN_CLUSTERS:
        noun = what[:-1] if k == 1 and what.endswith("s") else what
        return f"only {k} {noun} (fewer than {MIN_CLUSTERS})"
    if lower is None or upper is None:
        why = (note or "").removeprefix("no interval: ")
        return "no interval" + (f" ({why})" if why else "")
    if is_zero_width(lower, upper) or ZERO_WIDTH in (note or ""):
        return "zero-width interval (every resample gives the same value: no uncertainty shown)"
    return None


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
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
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
    if n_clusters < 2:
        return Metric(
            name=name,
            estimate=point,
            requested_method=method,
            n_clusters=n_clusters,
            n=n,
            note=join_notes(note, SINGLE_CLUSTER),
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
        **ends.metric_fields(),
        level=level,
        requested_method=method,
        B=B,
        seed=seed,
        scheme="poisson" if scheme == "poisson" else "multinomial",
        n_clusters=n_clusters,
        n=n,
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
