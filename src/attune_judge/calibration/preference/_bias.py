"""Bias diagnostics of pairwise judges: position flips, first-position wins, length effect."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.resampling._bootstrap import FloatArray
from attune_judge.calibration.resampling._means import paired_cluster_bootstrap
from attune_judge.calibration.resampling._ratio import ClusterSums
from attune_judge.errors import UserError

__all__ = [
    "LengthEffect",
    "LengthEffectComparison",
    "PositionBias",
    "compare_length_effects",
    "compare_rating_length_effects",
    "length_effect",
    "position_bias",
]

_SWAP = {"A": "B", "B": "A", "tie": "tie"}


class PositionBias(ResultModel):
    """How a pairwise judge's verdicts depend on the order of the two responses."""

    flip_rate: Metric
    """Share of pairs whose verdict changes when the order is swapped (after mapping labels)."""
    first_position_win_rate: Metric
    """Share of decisive verdicts (ties excluded) that pick the response shown first;
    0.5 means no position preference."""
    tie_rate: Metric
    """Share of verdicts (both orders) that are ties."""
    n_pairs: int
    """Pairs judged in both orders."""


def position_bias(
    verdict_ab: Sequence[str],
    verdict_ba: Sequence[str],
    clusters: Sequence[object],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> PositionBias:
    """Position diagnostics from each pair judged in both orders.

    Parameters
    ----------
    verdict_ab
        Verdict (``A``/``B``/``tie``) with response X shown first (as A).
    verdict_ba
        Verdict with Y shown first, in that call's labels (A = Y).
    clusters
        Cluster of each pair.
    """
    if not (len(verdict_ab) == len(verdict_ba) == len(clusters)) or not verdict_ab:
        raise UserError("position_bias needs equally long, non-empty verdict lists")
    bad = sorted({str(v) for v in [*verdict_ab, *verdict_ba]} - set(_SWAP))
    if bad:
        raise UserError(f"verdicts must be A, B or tie; got {bad[:5]}")
    cl = [str(c) for c in clusters]
    flips = [float(a != _SWAP[b]) for a, b in zip(verdict_ab, verdict_ba, strict=True)]
    all_v = [*verdict_ab, *verdict_ba]
    all_c = cl + cl
    first = [(float(v == "A"), c) for v, c in zip(all_v, all_c, strict=True) if v != "tie"]
    kw = {"B": B, "level": level, "seed": seed, "method": method}

    def mean(name: str, vals: list[float], cls: list[str]) -> Metric:
        if not vals:
            return Metric(name=name, estimate=None, undefined_reason="no decisive verdicts")
        res = paired_cluster_bootstrap(ClusterSums.from_long([name] * len(vals), cls, vals), **kw)  # type: ignore[arg-type]
        return res.means[0].model_copy(update={"name": name})

    return PositionBias(
        flip_rate=mean("position_flip_rate", flips, cl),
        first_position_win_rate=mean(
            "first_position_win_rate", [f for f, _ in first], [c for _, c in first]
        ),
        tie_rate=mean("tie_rate", [float(v == "tie") for v in all_v], all_c),
        n_pairs=len(flips),
    )


class LengthEffect(ResultModel):
    """Regression of the judge's preference for A on the length difference (A − B)."""

    model: str
    """``ols`` (linear probability; ties = ½) or ``logit`` (ties dropped)."""
    unit: str
    """Unit of the length difference (per 100 characters)."""
    slope: float
    """Change in P(A preferred) (OLS) or log-odds (logit) per unit of length difference."""
    slope_se: float
    """Cluster-robust standard error of the slope."""
    slope_lower: float
    """Lower end of the confidence interval (cluster-robust, normal)."""
    slope_upper: float
    """Upper end of the confidence interval."""
    p_value: float
    """Two-sided p-value of the slope."""
    intercept: float
    """Preference for A at equal length (0.5 / 0 means no position effect for OLS / logit)."""
    intercept_se: float
    """Cluster-robust standard error of the intercept."""
    level: float
    """Confidence level."""
    n: int
    """Comparisons used."""
    n_clusters: int
    """Clusters (for the robust covariance)."""


def length_effect(
    winners: Sequence[str],
    length_a: Sequence[float],
    length_b: Sequence[float],
    clusters: Sequence[object],
    *,
    model: Literal["ols", "logit"] = "ols",
    level: float = DEFAULT_LEVEL,
) -> LengthEffect:
    """Length effect with cluster-robust errors (statsmodels ``cov_type='cluster'``).

    ``y = 1`` when A wins, 0 when B wins; ties are ½ for OLS and dropped for logit.
    The regressor is ``(length_a − length_b) / 100`` (characters).
    """
    import statsmodels.api as sm

    y, x, g = [], [], []
    for w, la, lb, c in zip(winners, length_a, length_b, clusters, strict=True):
        if w not in _SWAP or (w == "tie" and model == "logit"):
            continue
        y.append(1.0 if w == "A" else 0.0 if w == "B" else 0.5)
        x.append((float(la) - float(lb)) / 100)
        g.append(str(c))
    groups = np.unique(np.asarray(g), return_inverse=True)[1] if g else np.zeros(0, int)
    if len(y) < 3 or len(set(g)) < 2 or np.ptp(x) == 0:
        raise UserError(
            "length effect needs at least 3 comparisons from 2+ clusters with varying lengths"
        )
    if np.ptp(y) == 0:
        raise UserError("length effect: the judge's preference never varies; nothing to explain")
    X = sm.add_constant(np.asarray(x))
    cls = sm.OLS if model == "ols" else sm.Logit
    kw = {"disp": 0} if model == "logit" else {}
    fit = cls(np.asarray(y), X).fit(cov_type="cluster", cov_kwds={"groups": groups}, **kw)
    ci = np.asarray(fit.conf_int(alpha=1 - level))
    return LengthEffect(
        model=model,
        unit="per 100 characters",
        slope=float(fit.params[1]),
        slope_se=float(fit.bse[1]),
        slope_lower=float(ci[1, 0]),
        slope_upper=float(ci[1, 1]),
        p_value=float(fit.pvalues[1]),
        intercept=float(fit.params[0]),
        intercept_se=float(fit.bse[0]),
        level=level,
        n=len(y),
        n_clusters=len(set(g)),
    )


class LengthEffectComparison(ResultModel):
    """People's and the judge's length effect on the same pairs, and their difference."""

    people: Metric
    """People's OLS slope: change in P(A chosen) per 100 characters of length difference
    (A − B; a tie counts ½), with a percentile cluster-bootstrap interval."""
    judge: Metric
    """The judge's slope on the same pairs."""
    difference: Metric
    """Judge minus people, paired cluster bootstrap (the same resampled clusters for both)."""
    ratio: Metric
    """Judge / people; its interval is withheld when people's interval includes 0 (the
    ratio is then unbounded)."""
    n: int
    """Pairs chosen by people and judged."""
    n_clusters: int
    """Clusters resampled."""


def _weighted_slopes(W: FloatArray, x: FloatArray, Y: FloatArray) -> FloatArray:
    """OLS slopes of each column of ``Y`` (n, k) on ``x`` under each row of weights ``W``
    (B, n): ``(S·Sxy − Sx·Sy) / (S·Sxx − Sx²)``, shape (B, k)."""
    S = W.sum(1)[:, None]
    Sx = (W @ x)[:, None]
    Sxx = (W @ (x * x))[:, None]
    Sy = W @ Y
    Sxy = W @ (x[:, None] * Y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray((S * Sxy - Sx * Sy) / (S * Sxx - Sx * Sx))


def compare_length_effects(
    people: Sequence[str],
    judge: Sequence[str],
    length_a: Sequence[float],
    length_b: Sequence[float],
    clusters: Sequence[object],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> LengthEffectComparison:
    """People's and the judge's length effects on the same pairs (winners ``A``/``B``/
    ``tie``; pairs where either is missing are skipped) and their difference and ratio, with
    a paired cluster bootstrap (percentile intervals).

    Raises
    ------
    UserError
        Fewer than 3 pairs or 2 clusters, no length variation, or people's or the judge's
        choices never vary.
    """
    val = {"A": 1.0, "B": 0.0, "tie": 0.5}
    rows = [
        (val[h], val[j], (float(la) - float(lb)) / 100, str(c))
        for h, j, la, lb, c in zip(people, judge, length_a, length_b, clusters, strict=True)
        if h in val and j in val
    ]
    return _compare_slopes(rows, B=B, level=level, seed=seed, what="pairs", unit="")


def compare_rating_length_effects(
    people: Sequence[float],
    judge: Sequence[float],
    lengths: Sequence[float],
    clusters: Sequence[object],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> LengthEffectComparison:
    """People's and the judge's length effects on the same rated replies: each side's
    ratings standardised (z-scores over the items, so the slopes are in standard deviations
    of that side's ratings per 100 characters), their difference and ratio with a paired
    cluster bootstrap. ``people`` is e.g. the people's mean rating per item."""
    y_p = np.array(people, dtype=np.float64)  # copies: standardised in place below
    y_j = np.array(judge, dtype=np.float64)
    for arr, who in ((y_p, "people's"), (y_j, "the judge's")):
        if len(arr) < 2:
            continue
        sd = float(np.std(arr, ddof=1)) if np.all(np.isfinite(arr)) else float("nan")
        if not np.isfinite(sd) or sd <= 1e-12 * max(1.0, float(np.max(np.abs(arr)))):
            raise UserError(f"length effects: {who} ratings never vary; nothing to explain")
        arr -= arr.mean()
        arr /= sd
    rows = [
        (float(a), float(b), float(n) / 100, str(c))
        for a, b, n, c in zip(y_p, y_j, lengths, clusters, strict=True)
    ]
    return _compare_slopes(rows, B=B, level=level, seed=seed, what="replies", unit=" (sd)")


def _compare_slopes(
    rows: list[tuple[float, float, float, str]],
    *,
    B: int,
    level: float,
    seed: int,
    what: str,
    unit: str,
) -> LengthEffectComparison:
    """The two slopes of (people, judge, x, cluster) rows, paired cluster bootstrap."""
    from attune_judge.calibration.resampling._bootstrap import bootstrap_weights
    from attune_judge.calibration.resampling._intervals import percentile_metric

    cl_names = sorted({r[3] for r in rows})
    if len(rows) < 3 or len(cl_names) < 2:
        raise UserError(f"length effects: need at least 3 {what} from 2+ clusters")
    Y = np.array([[r[0], r[1]] for r in rows])
    x = np.array([r[2] for r in rows])
    if np.ptp(x) == 0:
        raise UserError(f"length effects: the {what}' lengths do not vary")
    for k, who in enumerate(("people's", "the judge's")):
        if np.ptp(Y[:, k]) == 0:
            raise UserError(f"length effects: {who} answers never vary; nothing to explain")
    ci = {c: i for i, c in enumerate(cl_names)}
    cl = np.array([ci[r[3]] for r in rows])
    est = _weighted_slopes(np.ones((1, len(rows))), x, Y)[0]
    W = bootstrap_weights(len(cl_names), B, seed)[:, cl]
    reps = _weighted_slopes(W, x, Y)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio_reps = reps[:, 1] / reps[:, 0]
        ratio = float(est[1] / est[0]) if est[0] != 0 else None

    def metric(name: str, e: float | None, r: FloatArray, withhold: str | None = None) -> Metric:
        return percentile_metric(
            name,
            e,
            r,
            level=level,
            B=B,
            seed=seed,
            n_clusters=len(cl_names),
            n=len(rows),
            withhold=withhold,
        )

    people_m = metric(f"length effect (people){unit}", float(est[0]), reps[:, 0])
    unbounded = (
        None
        if people_m.lower is not None and (people_m.lower > 0 or (people_m.upper or 0) < 0)
        else "people's interval includes 0: the ratio is unbounded"
    )
    return LengthEffectComparison(
        people=people_m,
        judge=metric(f"length effect (judge){unit}", float(est[1]), reps[:, 1]),
        difference=metric(
            f"length effect (judge − people){unit}", float(est[1] - est[0]), reps[:, 1] - reps[:, 0]
        ),
        ratio=metric(f"length effect (judge / people){unit}", ratio, ratio_reps, unbounded),
        n=len(rows),
        n_clusters=len(cl_names),
    )
