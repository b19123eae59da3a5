"""Prediction-powered leaderboards: PPI++ per-model means and pairwise differences, by cluster.

The estimator (influence values, λ tuning, Wald intervals; the formulas and their sources) is in
``_ppi_estimator``; joining judgments with human ratings into the input columns in
``_ppi_columns``. This module ranks the models, compares every pair and renders the board.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration._results import ResultModel
from attune_judge.calibration.ppi._ppi_columns import PPIColumns, ppi_columns
from attune_judge.calibration.ppi._ppi_estimator import PPIEstimate, _check, _estimate, _ModelParts
from attune_judge.calibration.resampling._bootstrap import (
    MIN_CLUSTERS,
    FloatArray,
    few_clusters_warning,
    no_claim_reason,
)
from attune_judge.errors import UserError

__all__ = [
    "PPIColumns",
    "PPIDifference",
    "PPIEstimate",
    "PPILeaderboard",
    "PPIModelRow",
    "ppi_columns",
    "ppi_leaderboard",
    "ppi_plus_mean",
]


class PPIModelRow(ResultModel):
    """One model of a prediction-powered leaderboard."""

    model: str
    """Model name."""
    ppi: PPIEstimate
    """PPI++ mean on the human scale (the corrected score)."""
    judge_only: PPIEstimate
    """Mean judge score on all the model's items (on the judge's scale; biased if the judge is)."""
    human_only: PPIEstimate
    """Mean human value on the labelled items (unbiased, wider)."""
    lam: float
    """The power-tuning λ used (0 = human only, 1 = classical PPI)."""
    rectifier: float | None
    """Mean (human − judge) on the labelled items: the judge's bias there, sign reversed."""
    n_labelled: int
    """Items with a human label (and a judge score)."""
    n_unlabelled: int
    """Items with a judge score only."""
    effective_n: float | None
    """Human labels the human-only mean would need for the PPI variance."""
    ess_gain: float | None
    """``effective_n / n_labelled`` (> 1: the judge's scores are worth extra labels)."""
    rank: int
    """``1 + #{k : θ̂_PPI,k > θ̂_PPI,j}`` (the point rank; no claim when ``no_rank_claim``)."""
    no_rank_claim: str | None = None
    """Why this model makes no rank claim (its PPI mean has no valid interval: human labels
    in fewer than ``MIN_CLUSTERS`` conversations, none, or zero width;
    :func:`~attune_judge.calibration.no_claim_reason`): no difference with it is called
    distinguishable. ``None``: it may be ranked."""


class PPIDifference(ResultModel):
    """Difference ``model_a − model_b`` of the means, three ways."""

    model_a: str
    model_b: str
    ppi: PPIEstimate
    """Difference of the PPI++ means (paired over clusters)."""
    judge_only: PPIEstimate
    """Difference of the judge-only means."""
    human_only: PPIEstimate
    """Difference of the human-only means."""
    ess_gain: float | None
    """``Var(human-only difference) / Var(PPI difference)``."""
    distinguishable: bool
    """Whether the PPI interval excludes zero (never when either model makes no rank claim,
    or below ``MIN_CLUSTERS`` labelled conversations)."""


class PPILeaderboard(ResultModel):
    """Everything :func:`ppi_leaderboard` computes; rows sorted by PPI mean, best first."""

    rows: list[PPIModelRow]
    differences: list[PPIDifference]
    """Every pair, in row order (``model_a`` ranked above ``model_b``)."""
    level: float
    """Confidence level of every interval."""
    n_clusters: int
    """Clusters (conversations) in the data."""
    clip: tuple[float, float] | None
    """Bounds λ̂ was clipped to (``None``: not clipped)."""
    method: str = "PPI++ (power-tuned λ), cluster-robust Wald intervals"
    small_sample: bool = True
    """Whether the small-sample correction was applied."""
    n_labelled_clusters: int = 0
    """Clusters with at least one human label (the intervals rest on these)."""
    rank_claims: bool = True
    """``False`` below ``MIN_CLUSTERS`` labelled clusters: no pair is then called
    distinguishable, whatever its interval."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats: too few human-labelled conversations, models without a human label."""
    models_without_labels: list[str] = Field(default_factory=list)
    """Models the judge scored but no person labelled: not on the board (nothing to correct
    their means with), listed here and in ``warnings``."""
    bounds: tuple[float, float] | None = None
    """The scale of the human values (PPI++ and human-only means; differences within ±its
    width): every interval was clipped to it. ``None``: no scale given, intervals unbounded."""
    judge_bounds: tuple[float, float] | None = None
    """The scale of the judge's scores, which its judge-only intervals were clipped to."""
    note: str = (
        "PPI++ corrects the judge's per-model means with the human-labelled subset: unbiased for "
        "the mean human value, narrower than the human-only mean when the judge tracks people. "
        "Judge-only intervals are on the judge's scale and ignore its bias."
    )


def ppi_plus_mean(
    judge: Sequence[float] | FloatArray,
    human: Sequence[float | None],
    clusters: Sequence[object] | NDArray[Any] | None = None,
    *,
    lam: float | None = None,
    clip: tuple[float, float] | None = None,
    level: float = DEFAULT_LEVEL,
    small_sample: bool = True,
    weights: Sequence[float | None] | None = None,
) -> tuple[PPIEstimate, float]:
    """PPI++ mean of one model: ``(estimate, λ used)``.

    Parameters
    ----------
    judge
        The judge's score of every item.
    human
        The human value of each item, ``None``/NaN where unlabelled.
    clusters
        Cluster of each item (default: every item its own cluster, the iid case).
    lam
        A fixed λ (``1`` = classical PPI, ``0`` = human only); ``None`` tunes it.
    clip
        Bounds for the tuned λ (e.g. ``(0, 1)`` as in ``ppi_py``); ``None`` = no clipping.
    level, small_sample, weights
        Confidence level, small-sample correction and label weights, as in
        :func:`ppi_leaderboard`.
    """
    cl = list(range(len(judge))) if clusters is None else list(clusters)
    board = ppi_leaderboard(
        ["m"] * len(judge),
        cl,
        judge,
        human,
        level=level,
        clip=clip,
        lam=lam,
        small_sample=small_sample,
        weights=weights,
    )
    return board.rows[0].ppi, board.rows[0].lam


def ppi_leaderboard(
    models: Sequence[str],
    clusters: Sequence[object],
    judge: Sequence[float] | FloatArray,
    human: Sequence[float | None],
    *,
    level: float = DEFAULT_LEVEL,
    clip: tuple[float, float] | None = None,
    lam: float | None = None,
    small_sample: bool = True,
    weights: Sequence[float | None] | None = None,
    bounds: tuple[float, float] | None = None,
    judge_bounds: tuple[float, float] | None = None,
) -> PPILeaderboard:
    """Per-model PPI++ means and pairwise differences, beside judge-only and human-only.

    Parameters
    ----------
    models, clusters, judge, human
        One row per judged item: candidate model, cluster (conversation), the judge's score,
        and the human value (``None``/NaN when the item has no human label; average several
        raters beforehand). Human values and judge scores need not share a scale (λ adapts),
        but the judge-only column is then on the judge's scale.
    level
        Confidence level (two-sided Wald intervals).
    clip
        Bounds for each tuned λ (``(0, 1)`` keeps it between human-only and classical PPI).
    lam
        A fixed λ for every model instead of tuning.
    small_sample
        Small-sample correction (default): cluster-robust variance × G/(G−1) and a t quantile
        with (labelled clusters − 1) degrees of freedom. ``False``: the large-sample normal
        interval of the PPI++ paper (variance divisor n, as ``ppi_py``).
    weights
        Per row, the weight of its human label (``1 / inclusion probability``; read on the
        labelled rows only) when the labels were drawn with unequal probabilities: the
        labelled means become Hajek means with their cluster influence values, and the judge's
        side the mean over all the model's items (see ``_ModelParts``). ``None``, or the same
        weight on every label: unweighted.
    bounds, judge_bounds
        The scales of the human values and of the judge's scores (e.g. ``(0, 1)``): each Wald
        interval is clipped to its scale (a difference to ±the scale's width). The mean lies
        on the scale, so clipping never loses coverage; with few labelled conversations the
        t quantile makes the raw interval leave the scale (2 conversations: t₁ = 12.7). A
        warning names the clipped intervals.

    Returns
    -------
    PPILeaderboard
        Models with no human label are left out (nothing to correct them with; listed in
        ``models_without_labels`` and ``warnings``); with no
        unlabelled item λ is 0 (the PPI mean is the human-only mean).
    """
    if not 0 < level < 1:
        raise UserError(f"level must be between 0 and 1, not {level!r}")
    ss = _small_sample_df if small_sample else _no_df
    f, y = _check(models, clusters, judge, human)
    w = None if weights is None else _weights(weights, y)
    keys = {c: k for k, c in enumerate(dict.fromkeys(str(c) for c in clusters))}
    cl = np.array([keys[str(c)] for c in clusters])
    C = len(keys)
    marr = np.asarray([str(m) for m in models])
    parts: dict[str, _ModelParts] = {}
    unlabelled: list[str] = []
    for m in sorted(set(marr.tolist())):
        p = _ModelParts(np.flatnonzero(marr == m), cl, C, f, y, w)
        if p.n_lab.sum() > 0:
            parts[m] = p
        else:
            unlabelled.append(m)
    if not parts:
        raise UserError("no model has both judge scores and human labels")
    lams = {m: p.tuned_lambda(lam, clip) for m, p in parts.items()}
    ests = {
        m: p.y_bar + lams[m] * ((p.fu_bar - p.fl_bar) if p.has_unlabelled else 0.0)
        for m, p in parts.items()
    }
    phis = {m: p.a + lams[m] * p.b for m, p in parts.items()}
    order = sorted(parts, key=lambda m: -ests[m])
    ranks = {m: 1 + sum(ests[k] > ests[m] for k in parts) for m in parts}
    rows = [_model_row(m, parts[m], lams[m], ests[m], phis[m], level, ss, ranks[m]) for m in order]
    n_lab_cl = int(np.unique(cl[~np.isnan(y)]).size)
    claims = n_lab_cl >= MIN_CLUSTERS
    for r in rows:
        r.no_rank_claim = no_claim_reason(
            r.ppi, int(np.sum(parts[r.model].n_lab > 0)), "human-labelled conversations"
        )
    blocked = {r.model: r.no_rank_claim for r in rows if r.no_rank_claim}
    rows.sort(key=lambda r: (claims and r.no_rank_claim is not None, r.rank, r.model))
    order = [r.model for r in rows]
    diffs = [
        _difference(ma, mb, parts, ests, phis, level, ss, claims and not {ma, mb} & set(blocked))
        for ma, mb in combinations(order, 2)
    ]
    warnings = [w for w in [few_clusters_warning(n_lab_cl, "human-labelled conversations")] if w]
    clipped = _clip_to_scales(rows, diffs, bounds, judge_bounds)
    if clipped:
        warnings.append(
            f"intervals clipped to the scale ({'; '.join(clipped[:6])}"
            f"{' ...' if len(clipped) > 6 else ''}): the Wald interval left it (few labelled "
            "conversations); the clipped interval keeps its coverage"
        )
    if claims:
        warnings += [
            f"{m}: no rank claim ({why}); no difference with it is called distinguishable"
            for m, why in blocked.items()
        ]
    warnings += [
        f"{m}: no human label on any of its items; left off the board (nothing to correct "
        "its judge-only mean with)"
        for m in unlabelled
    ]
    method = PPILeaderboard.model_fields["method"].default
    return PPILeaderboard(
        method=method if w is None else f"{method}; labels weighted by 1/inclusion probability",
        rows=rows,
        differences=diffs,
        level=level,
        n_clusters=C,
        clip=clip,
        small_sample=small_sample,
        n_labelled_clusters=n_lab_cl,
        rank_claims=claims,
        warnings=warnings,
        models_without_labels=unlabelled,
        bounds=bounds,
        judge_bounds=judge_bounds,
    )


def _clip(e: PPIEstimate, lo: float, hi: float) -> bool:
    """Clip ``e``'s interval to ``[lo, hi]`` in place; whether it left it."""
    if e.lower is None or e.upper is None or (lo <= e.lower and e.upper <= hi):
        return False
    e.lower, e.upper = min(max(e.lower, lo), hi), max(min(e.upper, hi), lo)
    return True


def _clip_to_scales(
    rows: Sequence[PPIModelRow],
    diffs: Sequence[PPIDifference],
    bounds: tuple[float, float] | None,
    judge_bounds: tuple[float, float] | None,
) -> list[str]:
    """Clip every interval to its scale (differences to ±its width); what was clipped."""
    out: list[str] = []
    for scale, which in ((bounds, ("ppi", "human_only")), (judge_bounds, ("judge_only",))):
        if scale is None:
            continue
        lo, hi = scale
        for r in rows:
            out += [f"{r.model} {w}" for w in which if _clip(getattr(r, w), lo, hi)]
        for d in diffs:
            name = f"{d.model_a} − {d.model_b}"
            out += [f"{name} {w}" for w in which if _clip(getattr(d, w), lo - hi, hi - lo)]
    return out


def _weights(weights: Sequence[float | None], y: FloatArray) -> FloatArray | None:
    """The weights as an array (1 on unlabelled rows); each labelled row's must be > 0.
    ``None`` when the labelled rows' weights are all equal (the unweighted estimator then)."""
    if len(weights) != len(y):
        raise UserError("weights must have one entry per row")
    w = np.asarray([1.0 if v is None else v for v in weights], dtype=float)
    bad = ~np.isnan(y) & ~(np.isfinite(w) & (w > 0))
    if bad.any():
        raise UserError(f"row {int(np.flatnonzero(bad)[0])}: a label's weight must be positive")
    return None if np.unique(w[~np.isnan(y)]).size < 2 else w


def _small_sample_df(clusters_labelled: int) -> int | None:
    return clusters_labelled


def _no_df(clusters_labelled: int) -> int | None:
    return None


def _model_row(
    m: str,
    p: _ModelParts,
    lam: float,
    est: float,
    phi: FloatArray,
    level: float,
    ss: Callable[[int], int | None],
    rank: int,
) -> PPIModelRow:
    """One model's row of the leaderboard."""
    n_l, n_u = int(p.n_lab.sum()), int(p.n_unl.sum())
    nc_all, nc_l = int(np.sum(p.n_all > 0)), int(np.sum(p.n_lab > 0))
    var_h, var_p = float(np.sum(p.a**2)), float(np.sum(phi**2))
    gain = var_h / var_p if var_p > 0 else None
    return PPIModelRow(
        model=m,
        ppi=_estimate(est, phi, level, n_l + n_u, nc_all, ss(nc_l)),
        judge_only=_estimate(p.fa_bar, p.phi_fa, level, n_l + n_u, nc_all, ss(nc_all)),
        human_only=_estimate(p.y_bar, p.a, level, n_l, nc_l, ss(nc_l)),
        lam=lam,
        rectifier=float(p.y_bar - p.fl_bar),
        n_labelled=n_l,
        n_unlabelled=n_u,
        effective_n=None if gain is None else n_l * gain,
        ess_gain=gain,
        rank=rank,
    )


def _difference(
    ma: str,
    mb: str,
    parts: dict[str, _ModelParts],
    ests: dict[str, float],
    phis: dict[str, FloatArray],
    level: float,
    ss: Callable[[int], int | None],
    claims: bool,
) -> PPIDifference:
    """``ma − mb`` three ways, paired over the clusters the two models share."""
    pa, pb = parts[ma], parts[mb]
    n = int(pa.n_all.sum() + pb.n_all.sum())
    nl = int(pa.n_lab.sum() + pb.n_lab.sum())
    nc = int(np.sum((pa.n_all + pb.n_all) > 0))
    ncl = int(np.sum((pa.n_lab + pb.n_lab) > 0))
    d_ppi = _estimate(ests[ma] - ests[mb], phis[ma] - phis[mb], level, n, nc, ss(ncl))
    var_h = float(np.sum((pa.a - pb.a) ** 2))
    var_p = float(np.sum((phis[ma] - phis[mb]) ** 2))
    return PPIDifference(
        model_a=ma,
        model_b=mb,
        ppi=d_ppi,
        judge_only=_estimate(pa.fa_bar - pb.fa_bar, pa.phi_fa - pb.phi_fa, level, n, nc, ss(nc)),
        human_only=_estimate(pa.y_bar - pb.y_bar, pa.a - pb.a, level, nl, ncl, ss(ncl)),
        ess_gain=var_h / var_p if var_p > 0 else None,
        distinguishable=bool(
            claims
            and d_ppi.lower is not None
            and d_ppi.upper is not None
            and (d_ppi.lower > 0 or d_ppi.upper < 0)
        ),
    )
