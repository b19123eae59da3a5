"""Multi-rater reliability: Krippendorff's α (four levels) and Fleiss' κ, with cluster intervals.

Point estimates come from the reference packages (``krippendorff``, ``statsmodels``). The
bootstrap re-weights per-cluster coincidence matrices (α) or per-cluster category counts (κ),
so every replicate is a weighted sum — one matrix product for all of them. At unit weights the
weighted formulas give the package values (checked in the tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric
from attune_judge.calibration.agreement._table import RatingTable
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic
from attune_judge.errors import UserError

__all__ = [
    "AlphaLevel",
    "CoincidenceData",
    "coincidence_data",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
]

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


class CoincidenceData:
    """Per-cluster coincidence matrices of a table, and α of any weighted sum of them."""

    def __init__(
        self,
        codes: np.ndarray,
        domain: FloatArray,
        clusters: Sequence[str],
        measurement: str,
        weights: Sequence[float] | None = None,
    ):
        """``codes``: items × raters integer codes into ``domain`` (−1 = missing); ``weights``:
        per item, a frequency weight multiplying its coincidences (an item of weight k counts as
        k copies of it: the weighted coincidence matrix)."""
        self.domain = domain
        self.measurement = measurement
        self.index: dict[str, int] = {}
        """str(value) → position in ``domain`` (set by ``coincidence_data``)."""
        V = len(domain)
        counts = np.zeros((codes.shape[0], V))
        for j in range(codes.shape[1]):
            ok = codes[:, j] >= 0
            np.add.at(counts, (np.flatnonzero(ok), codes[ok, j]), 1.0)
        m = counts.sum(1)
        self.pairable_units = int(np.sum(m >= 2))
        self.unpairable_units = int(np.sum((m > 0) & (m < 2)))
        self.n_values = int(m[m >= 2].sum())
        keep = m >= 2
        cl_names, cidx = np.unique(np.asarray(clusters), return_inverse=True)
        # clusters that hold a pairable item: a conversation that only one coder rated (the
        # judge, left out of a humans-only table) carries nothing for α and is not resampled
        self.pairable_clusters = np.zeros(len(cl_names), dtype=bool)
        self.pairable_clusters[cidx[keep]] = True
        per_item = np.einsum("uv,uw->uvw", counts[keep], counts[keep])
        per_item -= np.einsum("uv,vw->uvw", counts[keep], np.eye(V))
        per_item /= (m[keep] - 1)[:, None, None]
        if weights is not None:
            per_item *= np.asarray(weights, dtype=float)[keep][:, None, None]
        coinc = np.zeros((len(cl_names), V, V))
        np.add.at(coinc, cidx[keep], per_item)
        self.n_clusters = len(cl_names)
        self.flat = coinc.reshape(len(cl_names), V * V)
        if measurement == "interval":
            self.delta: FloatArray | None = (domain[:, None] - domain[None, :]) ** 2
        elif measurement == "ratio":
            s = domain[:, None] + domain[None, :]
            with np.errstate(invalid="ignore", divide="ignore"):
                d = ((domain[:, None] - domain[None, :]) / s) ** 2
            self.delta = np.where(s == 0, 0.0, d)
        elif measurement == "nominal":
            self.delta = 1.0 - np.eye(V)
        else:
            self.delta = None  # ordinal: depends on the marginals of each replicate

    def alpha(self, w: FloatArray) -> FloatArray:
        """α for each row of cluster weights ``w`` (k, C); NaN when undefined."""
        V = len(self.domain)
        coinc = (w @ self.flat).reshape(-1, V, V)
        nv = coinc.sum(2)
        n = nv.sum(1)
        if self.delta is None:
            cum = np.cumsum(nv, axis=1)
            lo = np.minimum.outer(np.arange(V), np.arange(V))
            hi = np.maximum.outer(np.arange(V), np.arange(V))
            between = cum[:, hi] - cum[:, lo] + nv[:, lo]
            delta = (between - (nv[:, :, None] + nv[:, None, :]) / 2) ** 2
        else:
            delta = np.broadcast_to(self.delta, coinc.shape)
        do = np.sum(coinc * delta, axis=(1, 2))
        de = np.einsum("kv,kw,kvw->k", nv, nv, delta)
        with np.errstate(invalid="ignore", divide="ignore"):
            a = 1 - (n - 1) * do / de
        a[~(de > 0)] = np.nan
        return np.asarray(a, dtype=np.float64)


def coincidence_data(
    table: RatingTable, measurement: AlphaLevel, scale: Sequence[float | str] | None = None
) -> CoincidenceData:
    """Encode a table's values for α at ``level`` (UserError for non-numeric interval data)."""
    vals = [v for row in table.values for v in row if v is not None]
    if measurement in ("interval", "ratio") or (measurement == "ordinal" and scale is None):
        table.float_matrix(measurement)  # raises with examples when non-numeric
    if scale is not None:
        domain_vals: list[float | str] = list(scale)
        extra = sorted({str(v) for v in vals} - {str(s) for s in domain_vals})
        if extra:
            raise UserError(f"values {extra[:5]} are not on the declared scale {domain_vals}")
        index = {str(v): i for i, v in enumerate(domain_vals)}
    else:
        domain_vals = sorted(set(vals), key=lambda v: (isinstance(v, str), v))
        index = {str(v): i for i, v in enumerate(domain_vals)}
    codes = np.array(
        [[-1 if v is None else index[str(v)] for v in row] for row in table.values], dtype=int
    ).reshape(len(table.items), len(table.raters))
    numeric = all(isinstance(v, int | float) for v in domain_vals)
    domain = (
        np.asarray(domain_vals, dtype=np.float64)
        if numeric
        else np.arange(len(domain_vals), dtype=float)
    )
    data = CoincidenceData(codes, domain, table.clusters, measurement, table.weights)
    data.index = index
    return data


def krippendorff_alpha(
    table: RatingTable,
    measurement: AlphaLevel = "ordinal",
    *,
    scale: Sequence[float | str] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> Metric:
    """Krippendorff's α at one level of measurement with a cluster-bootstrap interval.

    Items rated by fewer than two raters are unpairable and ignored (counted in ``note``).
    With ``table.weights`` the estimate is α of the weighted coincidence matrix (each item's
    coincidences times its weight: with integer weights, the package's α of the data with each
    item repeated that many times); without, it is the ``krippendorff`` package's.
    When every pairable value is identical the expected disagreement is 0 and α is undefined:
    the result has ``estimate=None`` and ``undefined_reason`` (never a NaN).
    """
    import krippendorff

    data = coincidence_data(table, measurement, scale)
    note = (
        f"{data.pairable_units} pairable items, {data.unpairable_units} with a single rating "
        "(ignored)"
    )
    name = f"krippendorff_alpha_{measurement}"
    if data.pairable_units == 0:
        return Metric(
            name=name,
            estimate=None,
            undefined_reason="no item has two or more ratings (α needs pairable values)",
            note=note,
        )
    if not np.isfinite(data.alpha(np.ones((1, data.n_clusters)))[0]):
        return Metric(
            name=name,
            estimate=None,
            undefined_reason="all pairable values are identical: no expected disagreement, "
            "α is undefined (perfect agreement without variation)",
            n=data.n_values,
            n_clusters=int(data.pairable_clusters.sum()),
            note=note,
        )
    idx = np.flatnonzero(data.pairable_clusters)

    def alpha(w: FloatArray) -> FloatArray:
        full = np.zeros((len(w), data.n_clusters))
        full[:, idx] = w
        return data.alpha(full)

    res = bootstrap_statistic(
        alpha,
        len(idx),
        name=name,
        B=B,
        level=level,
        seed=seed,
        method=method,
        n=data.n_values,
        batch=max(1, int(2e7 // max(1, len(data.domain) ** 2))),
        note=note if table.weights is None else f"{note}; weighted coincidence matrix",
    )
    if table.weights is not None:
        return res
    codes = np.full((len(table.raters), len(table.items)), np.nan)
    for i, row in enumerate(table.values):
        for j, v in enumerate(row):
            if v is not None:
                codes[j, i] = data.domain[data.index[str(v)]]
    official = float(
        krippendorff.alpha(
            reliability_data=codes, value_domain=data.domain, level_of_measurement=measurement
        )
    )
    return res.model_copy(update={"estimate": official})


def _category_counts(
    table: RatingTable, scale: Sequence[float | str] | None
) -> tuple[FloatArray, list[str]]:
    """Items × categories counts of ratings (categories: the declared scale or those seen)."""
    seen = sorted({str(v) for row in table.values for v in row if v is not None})
    if scale is not None:
        cats = [str(float(v)) if isinstance(v, int | float) else str(v) for v in scale]
        extra = sorted(set(seen) - set(cats))
        if extra:
            raise UserError(f"values {extra[:5]} are not on the declared scale {list(scale)}")
    else:
        cats = seen
    idx = {v: k for k, v in enumerate(cats)}
    X = np.zeros((len(table.values), len(cats)))
    for i, row in enumerate(table.values):
        for v in row:
            if v is not None:
                X[i, idx[str(v)]] += 1
    return X, cats


def _chance_corrected(
    table: RatingTable,
    name: str,
    scale: Sequence[float | str] | None,
    B: int,
    level: float,
    seed: int,
    method: IntervalMethod,
) -> Metric:
    """Fleiss' κ or Gwet's AC1 for any number of ratings per item, with a cluster interval.

    Per item i with ``r_i`` ratings and ``r_ik`` in category k: observed agreement
    ``p_a = mean over items with r_i ≥ 2 of Σ_k r_ik (r_ik − 1) / (r_i (r_i − 1))``; category
    shares ``π_k = mean over rated items of r_ik / r_i``; chance agreement ``Σ_k π_k²`` (Fleiss)
    or ``Σ_k π_k (1 − π_k) / (q − 1)`` (Gwet's AC1, q categories). With the same number of
    ratings per item this is Fleiss (1971) exactly; with unequal numbers it is the generalisation
    of Gwet (2014, Handbook of Inter-Rater Reliability, ch. 2; R/Python ``irrCAC``). With
    ``table.weights`` every mean over items is the weighted mean (frequency weights).
    """
    X, cats = _category_counts(table, scale)
    r = X.sum(1)
    rated = r >= 1
    X, r = X[rated], r[rated]
    clusters = np.asarray(table.clusters)[rated]
    pairable = r >= 2
    if not pairable.any():
        return Metric(name=name, estimate=None, undefined_reason="no item has two or more ratings")
    q = len(cats)
    with np.errstate(invalid="ignore", divide="ignore"):
        pa_i = np.where(pairable, np.sum(X * (X - 1), 1) / (r * (r - 1)), 0.0)
    shares = X / r[:, None]
    cl_names, cidx = np.unique(clusters, return_inverse=True)
    per_cluster = np.zeros((len(cl_names), q + 3))
    w = np.ones(len(r)) if table.weights is None else np.asarray(table.weights, float)[rated]
    np.add.at(
        per_cluster,
        cidx,
        np.column_stack([shares, pa_i, pairable.astype(float), np.ones(len(r))]) * w[:, None],
    )

    def stat(w: FloatArray) -> FloatArray:
        s = w @ per_cluster
        with np.errstate(invalid="ignore", divide="ignore"):
            pi = s[:, :q] / s[:, q + 2][:, None]
            pa = s[:, q] / s[:, q + 1]
            if name == "gwet_ac1":
                pe = np.sum(pi * (1 - pi), 1) / (q - 1) if q > 1 else np.full(len(s), np.nan)
            else:
                pe = np.sum(pi**2, 1)
            out = (pa - pe) / (1 - pe)
        out[~(1 - pe > 0) | ~np.isfinite(out)] = np.nan
        return np.asarray(out, dtype=np.float64)

    n_unequal = len(set(r[pairable].tolist()))
    note = (
        f"{int(pairable.sum())} items with two or more ratings"
        + (
            f" (between {int(r[pairable].min())} and {int(r[pairable].max())} per item)"
            if n_unequal > 1
            else f" ({int(r[pairable][0])} each)"
        )
        + f"; {q} categories"
        + (
            f"; {int((~pairable).sum())} items with a single rating count only in π"
            if (~pairable).any()
            else ""
        )
    )
    res = bootstrap_statistic(
        stat,
        len(cl_names),
        name=name,
        B=B,
        level=level,
        seed=seed,
        method=method,
        n=int(pairable.sum()),
        note=note,
    )
    if res.estimate is None:
        return res.model_copy(update={"undefined_reason": "all ratings fall in one category"})
    return res


def fleiss_kappa(
    table: RatingTable,
    *,
    scale: Sequence[float | str] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> Metric:
    """Fleiss' κ with a cluster-bootstrap interval, for any number of ratings per item.

    With the same number of ratings per item this is Fleiss (1971) (equal to statsmodels'
    ``fleiss_kappa``); items with other numbers of ratings are not dropped but enter through
    Gwet's generalisation (see ``_chance_corrected``). ``scale`` adds unobserved categories
    (they do not change κ).
    """
    return _chance_corrected(table, "fleiss_kappa", scale, B, level, seed, method)


def gwet_ac1(
    table: RatingTable,
    *,
    scale: Sequence[float | str] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> Metric:
    """Gwet's AC1 (Gwet 2008) for two or more raters and any number of ratings per item.

    Chance agreement ``Σ_k π_k (1 − π_k) / (q − 1)`` depends on the number of categories q:
    pass the declared ``scale`` so that unused categories count.
    """
    return _chance_corrected(table, "gwet_ac1", scale, B, level, seed, method)
