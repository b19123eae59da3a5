"""Agreement between two raters on the same items, each figure with a cluster-bootstrap interval.

Every metric is a function of the weighted contingency table ``T* = Σ_c w_c T_c`` of the two
raters' values (``T_c`` the table of cluster c), so all bootstrap replicates come from one
``(B × C) @ (C × K²)`` product. With many distinct values (more than ``MAX_TABLE`` categories, for
example continuous scores) raw agreement, MAE, Pearson and Spearman switch to row weights (still
vectorised) and Kendall's τ-b to a per-replicate loop with a smaller default ``B`` (2,000);
Cohen's κ then needs categories and is reported undefined.

Conventions
-----------
- **Raw agreement**: exact equality of the two values (``|x − y| ≤ tolerance`` for numbers).
- **Cohen's κ spacing** (``spacing``): ``scale_index`` — categories are the declared ``scale``
  (unobserved categories included) at positions 0, 1, 2, ...; ``observed_index`` — categories are
  the values observed in either rater's data, at positions 0, 1, 2, ... (what scikit-learn's
  ``cohen_kappa_score`` does); ``value`` — positions are the numeric values themselves.
  Unweighted κ does not depend on spacing; linear and quadratic κ do.
- Spearman is Pearson of mid-ranks; Kendall is τ-b (tie-corrected), as in SciPy.
- **Scott's π** (1955): chance agreement from the pooled category shares of both raters,
  ``Σ_k ((r_k + c_k)/2)²``. **Gwet's AC1** (2008): chance agreement
  ``Σ_k π_k (1 − π_k) / (q − 1)`` with the same pooled shares π_k and q categories of the table —
  so AC1 depends on the categories counted (the declared scale with ``scale_index``, else those
  observed). Both are unweighted (exact agreement).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import (
    FloatArray,
    WeightedStatistic,
    bootstrap_statistic,
    per_replicate,
)
from attune_judge.errors import UserError

__all__ = ["PAIR_METRICS", "PairAgreement", "Spacing", "pair_agreement"]

Spacing = Literal["scale_index", "observed_index", "value"]
PairMetricName = Literal[
    "raw_agreement",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "scott_pi",
    "gwet_ac1",
    "spearman",
    "kendall_tau_b",
    "pearson",
    "mae",
]
PAIR_METRICS: tuple[PairMetricName, ...] = get_args(PairMetricName)
NUMERIC_ONLY = {
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "spearman",
    "kendall_tau_b",
    "pearson",
    "mae",
}
MAX_TABLE = 60


class PairAgreement(ResultModel):
    """Agreement of rater ``x`` with rater ``y`` on their common items."""

    x: str
    """Name of the first rater (usually the judge)."""
    y: str
    """Name of the second rater (a person or an aggregate of people)."""
    n: int
    """Items with both values."""
    n_clusters: int
    """Clusters among those items."""
    spacing: str
    """Category spacing used by weighted κ (see module docs)."""
    categories: list[float | str]
    """Categories of the contingency table (empty when too many distinct values)."""
    metrics: dict[str, Metric]
    """One entry per requested metric."""


def _wpearson(x: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
    """Weighted Pearson per row of ``w`` (k, n) for fixed x, y (n,) — or x, y (k, n)."""
    sw = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.sum(w * x, axis=-1) / sw
        my = np.sum(w * y, axis=-1) / sw
        dx = x - mx[:, None]
        dy = y - my[:, None]
        cov = np.sum(w * dx * dy, axis=-1)
        r = cov / np.sqrt(np.sum(w * dx * dx, axis=-1) * np.sum(w * dy * dy, axis=-1))
    return np.asarray(r, dtype=np.float64)


def _table_stats(
    T: FloatArray, pos: FloatArray, val: FloatArray | None, name: str, tol: float
) -> FloatArray:
    """A metric from weighted tables T (k, K, K); rows = x categories, columns = y."""
    n = T.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        if name == "raw_agreement":
            agree = np.abs(val[:, None] - val[None, :]) <= tol if val is not None else None
            hit = np.eye(len(pos), dtype=bool) if agree is None else agree
            return np.asarray(np.sum(T * hit, axis=(1, 2)) / n)
        if name in ("scott_pi", "gwet_ac1"):
            P = T / n[:, None, None]
            pa = np.trace(P, axis1=1, axis2=2)
            pi = (P.sum(2) + P.sum(1)) / 2
            K = P.shape[1]
            if name == "scott_pi":
                pe = np.sum(pi**2, 1)
            else:
                pe = np.sum(pi * (1 - pi), 1) / (K - 1) if K > 1 else np.full(len(n), np.nan)
            return np.asarray((pa - pe) / (1 - pe))
        if name.startswith("cohen_kappa"):
            d = pos[:, None] - pos[None, :]
            D = {"cohen_kappa": (d != 0) * 1.0, "cohen_kappa_linear": np.abs(d)}.get(name, d * d)
            P = T / n[:, None, None]
            r, c = P.sum(2), P.sum(1)
            expected = np.einsum("ki,kj,ij->k", r, c, D)
            return np.asarray(1 - np.sum(P * D, axis=(1, 2)) / expected)
        assert val is not None
        if name == "mae":
            return np.asarray(np.sum(T * np.abs(val[:, None] - val[None, :]), axis=(1, 2)) / n)
        if name == "kendall_tau_b":
            return _table_tau_b(T, n)
        r, c = T.sum(2), T.sum(1)
        if name == "spearman":
            rx = np.cumsum(r, axis=1) - r + (r + 1) / 2
            ry = np.cumsum(c, axis=1) - c + (c + 1) / 2
        else:  # pearson
            rx = np.broadcast_to(val, r.shape)
            ry = np.broadcast_to(val, c.shape)
        mx = np.sum(r * rx, axis=1) / n
        my = np.sum(c * ry, axis=1) / n
        dx, dy = rx - mx[:, None], ry - my[:, None]
        cov = np.einsum("kij,ki,kj->k", T, dx, dy)
        vx = np.sum(r * dx * dx, axis=1)
        vy = np.sum(c * dy * dy, axis=1)
        return np.asarray(cov / np.sqrt(vx * vy))


def _table_stat(
    Tc: FloatArray, K: int, pos: FloatArray, val: FloatArray | None, name: str, tol: float
) -> WeightedStatistic:
    def stat(w: FloatArray) -> FloatArray:
        return _table_stats((w @ Tc).reshape(-1, K, K), pos, val, name, tol)

    return stat


def _table_tau_b(T: FloatArray, n: FloatArray) -> FloatArray:
    """τ-b from tables: P − Q from 2-D tail sums, ties from the margins."""
    K = T.shape[1]
    # S[i, j] = Σ_{k ≥ i, l ≥ j} T[k, l]; G[i, j] = Σ_{k ≥ i, l ≤ j} T[k, l]
    S = np.flip(np.cumsum(np.cumsum(np.flip(T, (1, 2)), 1), 2), (1, 2))
    G = np.flip(np.cumsum(np.cumsum(np.flip(T, 1), 1), 2), 1)
    A = np.zeros_like(T)
    A[:, : K - 1, : K - 1] = S[:, 1:, 1:]
    D = np.zeros_like(T)
    D[:, : K - 1, 1:] = G[:, 1:, : K - 1]
    conc = np.sum(T * A, axis=(1, 2))
    disc = np.sum(T * D, axis=(1, 2))
    r, c = T.sum(2), T.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt((n**2 - np.sum(r**2, 1)) * (n**2 - np.sum(c**2, 1)))
        return np.asarray(2 * (conc - disc) / den)


def _midranks(v: FloatArray, w: FloatArray) -> FloatArray:
    """Mid-ranks of v (n,) in the weighted sample of each row of w (k, n)."""
    order = np.argsort(v, kind="stable")
    vs = v[order]
    starts = np.flatnonzero(np.r_[True, vs[1:] != vs[:-1]])
    group = np.cumsum(np.r_[True, vs[1:] != vs[:-1]]) - 1
    ws = w[:, order]
    gw = np.add.reduceat(ws, starts, axis=1)
    before = np.cumsum(gw, axis=1) - gw
    mid = before + (gw + 1) / 2
    out = np.empty_like(w)
    out[:, order] = mid[:, group]
    return out


def _row_stat(
    x: FloatArray, y: FloatArray, codes: np.ndarray, name: str, tol: float, iw: FloatArray
) -> WeightedStatistic:
    """Row-weight version of a metric (for many distinct values); ``iw``: item weights."""

    def stat(wc: FloatArray) -> FloatArray:
        w = wc[:, codes] * iw
        with np.errstate(invalid="ignore", divide="ignore"):
            if name == "raw_agreement":
                return np.asarray((w @ (np.abs(x - y) <= tol)) / w.sum(1))
            if name == "mae":
                return np.asarray((w @ np.abs(x - y)) / w.sum(1))
        if name == "pearson":
            return _wpearson(x, y, w)
        return _wpearson(_midranks(x, w), _midranks(y, w), w)

    return stat


def _kendall_loop(x: FloatArray, y: FloatArray, codes: np.ndarray) -> WeightedStatistic:
    from scipy import stats as sps

    def one(wc: FloatArray) -> float:
        rep = np.repeat(np.arange(len(x)), wc[codes].astype(int))
        if len(rep) < 2:
            return float("nan")
        return float(sps.kendalltau(x[rep], y[rep]).statistic)

    return per_replicate(one)


def _is_missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and bool(np.isnan(v)))


def _encode(values: Sequence[float | str | None]) -> tuple[list[float | str], bool]:
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    return list(values), numeric  # type: ignore[arg-type]


def pair_agreement(
    x: Sequence[float | str],
    y: Sequence[float | str],
    clusters: Sequence[object],
    *,
    x_name: str = "x",
    y_name: str = "y",
    metrics: Sequence[str] = PAIR_METRICS,
    scale: Sequence[float | str] | None = None,
    spacing: Spacing | None = None,
    tolerance: float = 0.0,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
    weights: Sequence[float] | None = None,
) -> PairAgreement:
    """Agreement metrics between two raters with cluster-bootstrap intervals.

    Parameters
    ----------
    x, y
        The two raters' values on the same items (equal length, no missing values).
    clusters
        Cluster (conversation) of each item.
    metrics
        Subset of ``PAIR_METRICS``; numeric-only metrics are skipped for categorical values.
    scale
        Declared categories in order (for example ``[1, 2, 3, 4, 5]``).
    spacing
        Positions used by weighted κ; default ``scale_index`` when ``scale`` is given, else
        ``observed_index``.
    tolerance
        Raw agreement counts ``|x − y| ≤ tolerance`` as agreement (0 = exact).
    B, level, seed, method
        Bootstrap settings (``DEFAULT_B``, 2,000, replicates by default).
    weights
        Per item, a frequency weight (``1 / inclusion probability`` of a labelled sample): the
        contingency table counts an item ``w`` times, so every metric is its weighted
        version (with integer weights, the metric of the data with each item repeated ``w``
        times). Kendall's τ-b over many distinct values (the per-replicate loop) is then
        reported undefined.
    """
    if not (len(x) == len(y) == len(clusters)):
        raise UserError(f"{x_name} and {y_name} must rate the same items (lengths differ)")
    if len(x) < 2:
        raise UserError(f"{x_name} vs {y_name}: fewer than two common items; nothing to compare")
    absent = [i for i in range(len(x)) if _is_missing(x[i]) or _is_missing(y[i])]
    if absent:
        raise UserError(
            f"{x_name} vs {y_name}: missing values (None/NaN) at positions {absent[:5]}; "
            "pass only items both rated"
        )
    xs, x_num = _encode(x)
    ys, y_num = _encode(y)
    numeric = x_num and y_num
    spacing = spacing or ("scale_index" if scale is not None else "observed_index")
    observed = sorted(set(xs) | set(ys), key=lambda v: (isinstance(v, str), v))
    if scale is not None:
        missing = [v for v in observed if v not in set(scale)]
        if missing:
            raise UserError(
                f"{x_name}/{y_name}: values {missing[:5]} are not on the declared "
                f"scale {list(scale)}"
            )
    cats = list(scale) if scale is not None and spacing == "scale_index" else observed
    cl_names, codes = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
    C, K = len(cl_names), len(cats)
    val = np.asarray(cats, dtype=np.float64) if numeric else None
    pos = val if spacing == "value" and val is not None else np.arange(K, dtype=np.float64)
    use_table = K <= MAX_TABLE
    results: dict[str, Metric] = {}
    iw = np.ones(len(xs)) if weights is None else np.asarray(weights, dtype=np.float64)
    if len(iw) != len(xs) or not np.all(np.isfinite(iw) & (iw > 0)):
        raise UserError(f"{x_name} vs {y_name}: one positive weight per item is needed")
    if use_table:
        index = {v: i for i, v in enumerate(cats)}
        xi = np.array([index[v] for v in xs])
        yi = np.array([index[v] for v in ys])
        Tc = np.zeros((C, K * K))
        np.add.at(Tc, (codes, xi * K + yi), iw)
    for name in metrics:
        if name not in PAIR_METRICS:
            raise UserError(f"unknown agreement metric {name!r}; choose from {list(PAIR_METRICS)}")
        if name in NUMERIC_ONLY and not numeric:
            continue
        engine, b, note = "vectorised", B, None
        stat: WeightedStatistic
        if use_table:
            stat = _table_stat(Tc, K, pos, val, name, tolerance)
        elif name.startswith("cohen_kappa") or name in ("scott_pi", "gwet_ac1"):
            results[name] = Metric(
                name=name,
                estimate=None,
                undefined_reason=(
                    f"{K} distinct values: {name} needs categories (at most {MAX_TABLE})"
                ),
                n=len(xs),
            )
            continue
        elif name == "kendall_tau_b" and weights is not None:
            results[name] = Metric(
                name=name,
                estimate=None,
                undefined_reason=f"{K} distinct values: weighted τ-b is not computed",
                n=len(xs),
            )
            continue
        elif name == "kendall_tau_b":
            xf, yf = np.asarray(xs, float), np.asarray(ys, float)
            stat = _kendall_loop(xf, yf, codes)
            engine, b = "loop", min(B, 2_000)
            note = "per-replicate loop (many distinct values)"
        else:
            xf, yf = np.asarray(xs, float), np.asarray(ys, float)
            stat = _row_stat(xf, yf, codes, name, tolerance, iw)
        results[name] = bootstrap_statistic(
            stat,
            C,
            name=name,
            B=b,
            level=level,
            seed=seed,
            method=method,
            n=len(xs),
            engine=engine,
            note=note,
        )
    return PairAgreement(
        x=x_name,
        y=y_name,
        n=len(xs),
        n_clusters=C,
        spacing=spacing,
        categories=cats if use_table else [],
        metrics=results,
    )
