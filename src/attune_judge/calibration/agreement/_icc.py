"""Intraclass correlation, the six forms of Shrout & Fleiss (1979), with intervals.

From the two-way ANOVA of an ``n`` targets (items) × ``k`` judges (raters) table with mean squares
``BMS`` (between targets), ``WMS`` (within targets), ``JMS`` (between judges) and ``EMS``
(residual):

=========  ============================================  =======================================
form       estimate                                      model (McGraw & Wong 1996 name)
=========  ============================================  =======================================
ICC(1,1)   (BMS − WMS) / (BMS + (k−1) WMS)               one-way random, single rater
ICC(2,1)   (BMS − EMS) / (BMS + (k−1) EMS + k (JMS − EMS)/n)  two-way random, absolute agreement
ICC(3,1)   (BMS − EMS) / (BMS + (k−1) EMS)               two-way mixed, consistency
ICC(1,k)   (BMS − WMS) / BMS                             mean of k raters
ICC(2,k)   (BMS − EMS) / (BMS + (JMS − EMS)/n)           mean of k raters
ICC(3,k)   (BMS − EMS) / BMS                             mean of k raters
=========  ============================================  =======================================

Intervals: the exact F intervals of Shrout & Fleiss (1979) for forms 1 and 3, Satterthwaite's
approximation for ICC(2,1) and its Spearman–Brown step-up for ICC(2,k) (McGraw & Wong 1996) —
the intervals printed by R ``psych::ICC`` and ``pingouin.intraclass_corr``. They assume
independent targets; when items are clustered in conversations, a cluster-bootstrap interval of
each form (ANOVA on cluster-weighted targets) is given as well and is the one to read.

The ANOVA needs every target rated by all k judges: targets with a missing rating are left out
and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.agreement._table import RatingTable
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic
from attune_judge.errors import UserError

__all__ = ["ICC_FORMS", "IccForm", "IccResult", "intraclass_correlation"]

IccName = Literal["ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)"]
ICC_FORMS: tuple[IccName, ...] = (
    "ICC(1,1)",
    "ICC(2,1)",
    "ICC(3,1)",
    "ICC(1,k)",
    "ICC(2,k)",
    "ICC(3,k)",
)
_DESCRIPTION = {
    "ICC(1,1)": "one-way random effects, single rater (absolute)",
    "ICC(2,1)": "two-way random effects, single rater, absolute agreement",
    "ICC(3,1)": "two-way mixed effects, single rater, consistency",
    "ICC(1,k)": "one-way random effects, mean of k raters",
    "ICC(2,k)": "two-way random effects, mean of k raters, absolute agreement",
    "ICC(3,k)": "two-way mixed effects, mean of k raters, consistency",
}


class IccForm(ResultModel):
    """One Shrout–Fleiss form."""

    form: str
    """``ICC(1,1)`` ... ``ICC(3,k)``."""
    description: str
    """The model in words."""
    estimate: float
    """The ICC."""
    lower: float
    """Lower end of the F-based interval (independent targets)."""
    upper: float
    """Upper end of the F-based interval."""
    F: float
    """F statistic of H0: ICC = 0."""
    df1: float
    """Numerator degrees of freedom."""
    df2: float
    """Denominator degrees of freedom."""
    p_value: float
    """One-sided p-value of H0: ICC = 0."""
    bootstrap: Metric | None = None
    """Cluster-bootstrap interval of the same form (clusters = conversations)."""


class IccResult(ResultModel):
    """All six forms with the ANOVA mean squares."""

    n_targets: int
    """Targets (items) rated by all k raters."""
    n_left_out: int
    """Targets left out for a missing rating."""
    k: int
    """Raters."""
    raters: list[str]
    """Rater names."""
    n_clusters: int
    """Clusters among the targets used."""
    level: float
    """Confidence level."""
    BMS: float
    """Between-targets mean square."""
    WMS: float
    """Within-targets mean square."""
    JMS: float
    """Between-judges mean square."""
    EMS: float
    """Residual mean square."""
    forms: list[IccForm]
    """The six forms, in ``ICC_FORMS`` order."""


def _mean_squares(X: FloatArray) -> tuple[float, float, float, float]:
    n, k = X.shape
    g = X.mean()
    ssr = k * np.sum((X.mean(1) - g) ** 2)
    ssc = n * np.sum((X.mean(0) - g) ** 2)
    sst = np.sum((X - g) ** 2)
    sse = sst - ssr - ssc
    return (
        float(ssr / (n - 1)),
        float((sst - ssr) / (n * (k - 1))),
        float(ssc / (k - 1)),
        float(sse / ((n - 1) * (k - 1))),
    )


def _weighted_forms(X: FloatArray, cidx: np.ndarray) -> object:
    """ICC of each form on cluster-weighted targets, for each row of weights ``(b, C)``."""
    k = X.shape[1]
    row = X.mean(1)

    def stat_for(form: str):  # type: ignore[no-untyped-def]
        def stat(w: FloatArray) -> FloatArray:
            wi = w[:, cidx]  # (b, n)
            N = wi.sum(1)
            with np.errstate(invalid="ignore", divide="ignore"):
                g = (wi @ row) / N
                col = (wi @ X) / N[:, None]
                ssr = k * np.sum(wi * (row[None, :] - g[:, None]) ** 2, 1)
                ssc = N * np.sum((col - g[:, None]) ** 2, 1)
                dev = X[None, :, :] - g[:, None, None]
                sst = np.einsum("bi,bij->b", wi, dev**2)
                sse = sst - ssr - ssc
                bms = ssr / (N - 1)
                wms = (sst - ssr) / (N * (k - 1))
                jms = ssc / (k - 1)
                ems = sse / ((N - 1) * (k - 1))
                out = _icc(form, bms, wms, jms, ems, N, k)
            out[~np.isfinite(out)] = np.nan
            return np.asarray(out, dtype=np.float64)

        return stat

    return stat_for


def _icc(form: str, bms, wms, jms, ems, n, k):  # type: ignore[no-untyped-def]
    if form == "ICC(1,1)":
        return (bms - wms) / (bms + (k - 1) * wms)
    if form == "ICC(2,1)":
        return (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
    if form == "ICC(3,1)":
        return (bms - ems) / (bms + (k - 1) * ems)
    if form == "ICC(1,k)":
        return (bms - wms) / bms
    if form == "ICC(2,k)":
        return (bms - ems) / (bms + (jms - ems) / n)
    return (bms - ems) / bms


def _f_intervals(
    bms: float, wms: float, jms: float, ems: float, n: int, k: int, level: float
) -> dict[str, tuple[float, float, float, float, float, float]]:
    """(lower, upper, F, df1, df2, p) per form (Shrout & Fleiss 1979; McGraw & Wong 1996)."""
    from scipy import stats

    a = 1 - level
    out: dict[str, tuple[float, float, float, float, float, float]] = {}
    # one-way
    f1 = bms / wms
    d1, d2 = n - 1, n * (k - 1)
    p1 = float(stats.f.sf(f1, d1, d2))
    fl = f1 / stats.f.ppf(1 - a / 2, d1, d2)
    fu = f1 * stats.f.ppf(1 - a / 2, d2, d1)
    out["ICC(1,1)"] = ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1), f1, d1, d2, p1)
    out["ICC(1,k)"] = (1 - 1 / fl, 1 - 1 / fu, f1, d1, d2, p1)
    # two-way mixed (consistency)
    f3 = bms / ems
    e1, e2 = n - 1, (n - 1) * (k - 1)
    p3 = float(stats.f.sf(f3, e1, e2))
    fl = f3 / stats.f.ppf(1 - a / 2, e1, e2)
    fu = f3 * stats.f.ppf(1 - a / 2, e2, e1)
    out["ICC(3,1)"] = ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1), f3, e1, e2, p3)
    out["ICC(3,k)"] = (1 - 1 / fl, 1 - 1 / fu, f3, e1, e2, p3)
    # two-way random (absolute agreement): Satterthwaite degrees of freedom
    icc2 = float(_icc("ICC(2,1)", bms, wms, jms, ems, n, k))
    aa = k * icc2 / (n * (1 - icc2))
    bb = 1 + k * icc2 * (n - 1) / (n * (1 - icc2))
    v = (aa * jms + bb * ems) ** 2 / ((aa * jms) ** 2 / (k - 1) + (bb * ems) ** 2 / e2)
    fs = stats.f.ppf(1 - a / 2, n - 1, v)
    fss = stats.f.ppf(1 - a / 2, v, n - 1)
    lo = n * (bms - fs * ems) / (fs * (k * jms + (k * n - k - n) * ems) + n * bms)
    hi = n * (fss * bms - ems) / (k * jms + (k * n - k - n) * ems + n * fss * bms)
    out["ICC(2,1)"] = (lo, hi, f3, e1, e2, p3)
    out["ICC(2,k)"] = (lo * k / (1 + lo * (k - 1)), hi * k / (1 + hi * (k - 1)), f3, e1, e2, p3)
    return {f: tuple(float(x) for x in t) for f, t in out.items()}  # type: ignore[misc]


def intraclass_correlation(
    table: RatingTable | Sequence[Sequence[float]] | FloatArray,
    *,
    raters: Sequence[str] | None = None,
    clusters: Sequence[object] | None = None,
    level: float = DEFAULT_LEVEL,
    B: int = DEFAULT_B,
    seed: int = 0,
    method: IntervalMethod = "bca",
    bootstrap: bool = True,
) -> IccResult:
    """The six Shrout & Fleiss ICC forms with F intervals and cluster-bootstrap intervals.

    Parameters
    ----------
    table
        A ``RatingTable`` (numeric values) or an ``n × k`` matrix (NaN = missing).
    raters
        Columns of the table to use (default all).
    clusters
        Cluster of each row of a matrix (a ``RatingTable`` carries its own); default: each
        target is its own cluster.
    level, B, seed, method
        Confidence level and bootstrap settings; ``bootstrap=False`` skips the bootstrap.

    Returns
    -------
    IccResult
    """
    if isinstance(table, RatingTable):
        sub = table.subset(list(raters)) if raters is not None else table
        X = sub.float_matrix("interval")
        names = list(sub.raters)
        cl = list(sub.clusters)
    else:
        X = np.asarray(table, dtype=np.float64)
        if X.ndim != 2:
            raise UserError("ICC needs a targets × raters matrix")
        names = list(raters) if raters is not None else [str(j) for j in range(X.shape[1])]
        cl = [str(c) for c in clusters] if clusters is not None else [str(i) for i in range(len(X))]
        if len(cl) != len(X):
            raise UserError(f"{len(X)} targets but {len(cl)} clusters")
    complete = np.all(np.isfinite(X), axis=1)
    Xc = X[complete]
    n, k = Xc.shape
    if k < 2:
        raise UserError("ICC needs at least two raters")
    if n < 2:
        raise UserError(
            f"ICC needs at least two targets rated by all {k} raters; found {n} "
            f"({int((~complete).sum())} left out for a missing rating)"
        )
    bms, wms, jms, ems = _mean_squares(Xc)
    if not (wms > 0 or ems > 0) or bms == 0:
        raise UserError("ICC is undefined: the ratings do not vary")
    ints = _f_intervals(bms, wms, jms, ems, n, k, level)
    cln, cidx = np.unique(np.asarray(cl)[complete], return_inverse=True)
    stat_for = _weighted_forms(Xc, cidx)
    forms = []
    for f in ICC_FORMS:
        lo, hi, F, d1, d2, p = ints[f]
        boot = None
        if bootstrap:
            boot = bootstrap_statistic(
                stat_for(f),  # type: ignore[operator]
                len(cln),
                name=f,
                B=B,
                level=level,
                seed=seed,
                method=method,
                n=n,
            )
        forms.append(
            IccForm(
                form=f,
                description=_DESCRIPTION[f],
                estimate=float(_icc(f, bms, wms, jms, ems, n, k)),
                lower=lo,
                upper=hi,
                F=F,
                df1=d1,
                df2=d2,
                p_value=p,
                bootstrap=boot,
            )
        )
    return IccResult(
        n_targets=n,
        n_left_out=int((~complete).sum()),
        k=k,
        raters=names,
        n_clusters=len(cln),
        level=level,
        BMS=bms,
        WMS=wms,
        JMS=jms,
        EMS=ems,
        forms=forms,
    )
