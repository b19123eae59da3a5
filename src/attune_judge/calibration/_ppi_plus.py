"""Prediction-powered leaderboards: PPI++ per-model means and pairwise differences, by cluster.

The judge scores every item; people label a subset. For model m, with ``L`` its labelled items
(human value ``Y`` and judge score ``f``) and ``U`` its unlabelled items (judge score only), the
PPI++ estimate (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient Prediction-Powered
Inference") is

    θ̂(λ) = Ȳ_L + λ · (f̄_U − f̄_L).

It is unbiased for the mean human value whatever the judge does (the bracket has mean zero when
the labelled items are a random subset); λ = 0 is the human-only mean, λ = 1 classical PPI
(Angelopoulos et al., Science 2023). Each mean is a ratio over clusters (conversations), so the
variance comes from the cluster influence values ``φ_c = (S_c − R·n_c) / Σ n`` of the three
ratios: ``φ_c(λ) = a_c + λ·b_c`` with ``a`` the influence of Ȳ_L and ``b`` that of
``f̄_U − f̄_L``, and ``Var θ̂(λ) = Σ_c φ_c(λ)²``. Power tuning picks the λ that minimises it,
``λ̂ = −Σ a_c b_c / Σ b_c²`` (optionally clipped). With one item per cluster and disjoint sets
this is exactly the PPI++ closed form: ``Var = var(Y − λf)_L / n + λ² var(f)_U / N`` (variances
with divisor n, as in the ``ppi_py`` reference code), and
``λ̂ = cov(Y, f)_L / n ÷ (var(f)_L / n + var(f)_U / N)`` — the PPI++ λ with the judge's variance
estimated separately on both sets instead of pooled.

Pairwise differences use each model's own λ̂, and their variance sums the per-cluster influence
differences, so conversations shared by the two models keep their covariance (paired). Intervals
are Wald intervals ``θ̂ ± q·SE``; by default with a small-sample correction (variance × G/(G−1),
``q`` from Student's t with labelled clusters − 1 degrees of freedom), which simulation showed
is needed with a few dozen labelled conversations (normal intervals covered 92–93% there).
The effective sample size of a PPI mean is the number of human labels the human-only mean
would need for the same variance: ``n_L · Var_human / Var_PPI``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field
from scipy import stats

from attune_judge.calibration._bootstrap import MIN_CLUSTERS, FloatArray, few_clusters_warning
from attune_judge.calibration._results import ResultModel
from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.data import Judgment, Rating

__all__ = [
    "PPIColumns",
    "PPIDifference",
    "PPIEstimate",
    "PPILeaderboard",
    "PPIModelRow",
    "ppi_columns",
    "ppi_leaderboard",
    "ppi_leaderboard_markdown",
    "ppi_plus_mean",
]


class PPIEstimate(ResultModel):
    """A mean (or difference) with its cluster-robust standard error and Wald interval."""

    estimate: float | None
    """Point estimate; ``None`` when undefined (no data)."""
    se: float | None = None
    """Cluster-robust standard error (delta method over clusters)."""
    lower: float | None = None
    """Lower end of the Wald interval."""
    upper: float | None = None
    """Upper end of the Wald interval."""
    level: float = 0.95
    """Two-sided confidence level."""
    n: int = 0
    """Observations behind the estimate (items)."""
    n_clusters: int = 0
    """Clusters holding at least one of these observations."""


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
    """``1 + #{k : θ̂_PPI,k > θ̂_PPI,j}``."""


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
    """Whether the PPI interval excludes zero."""


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
    """Caveats: too few human-labelled conversations."""
    note: str = (
        "PPI++ corrects the judge's per-model means with the human-labelled subset: unbiased for "
        "the mean human value, narrower than the human-only mean when the judge tracks people. "
        "Judge-only intervals are on the judge's scale and ignore its bias."
    )


def _influence(sums: FloatArray, counts: FloatArray) -> tuple[float, FloatArray]:
    """``(R, φ)``: ratio estimator ``Σ S / Σ n`` and its per-cluster influence values."""
    total = float(counts.sum())
    if total == 0:
        return float("nan"), np.zeros_like(sums)
    r = float(sums.sum()) / total
    return r, (sums - r * counts) / total


def _estimate(
    est: float,
    phi: FloatArray,
    level: float,
    n: int,
    nc: int,
    small: int | None = None,
) -> PPIEstimate:
    """Wald interval from influence values; ``small`` = labelled clusters for the small-sample
    correction (variance × G/(G−1) over the G clusters with influence, t with small−1 df)."""
    if n == 0 or not np.isfinite(est):
        return PPIEstimate(estimate=None, level=level, n=n, n_clusters=nc)
    var = float(np.sum(phi**2))
    if small is None:
        z = float(stats.norm.ppf(0.5 + level / 2))
    else:
        g = int(np.sum(phi != 0))
        var *= g / (g - 1) if g > 1 else np.nan
        z = float(stats.t.ppf(0.5 + level / 2, small - 1)) if small > 1 else np.nan
    if not np.isfinite(var * z):
        return PPIEstimate(estimate=float(est), level=level, n=n, n_clusters=nc)
    se = float(np.sqrt(var))
    return PPIEstimate(
        estimate=float(est),
        se=se,
        lower=float(est - z * se),
        upper=float(est + z * se),
        level=level,
        n=n,
        n_clusters=nc,
    )


class _ModelParts:
    """Per-cluster sums of one model: labelled Y and f, unlabelled f, all f."""

    def __init__(self, idx: np.ndarray, cl: np.ndarray, C: int, f: FloatArray, y: FloatArray):
        lab = ~np.isnan(y[idx])
        ci, fi, yi = cl[idx], f[idx], y[idx]

        def sums(mask: np.ndarray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
            s = np.bincount(ci[mask], weights=v[mask], minlength=C).astype(float)
            n = np.bincount(ci[mask], minlength=C).astype(float)
            return s, n

        sy, self.n_lab = sums(lab, yi)
        sfl, _ = sums(lab, fi)
        sfu, self.n_unl = sums(~lab, fi)
        sfa, self.n_all = sums(np.ones_like(lab), fi)
        self.y_bar, self.a = _influence(sy, self.n_lab)
        self.fl_bar, phi_fl = _influence(sfl, self.n_lab)
        self.fu_bar, phi_fu = _influence(sfu, self.n_unl)
        self.fa_bar, self.phi_fa = _influence(sfa, self.n_all)
        self.b = phi_fu - phi_fl
        self.has_unlabelled = self.n_unl.sum() > 0


def ppi_plus_mean(
    judge: Sequence[float] | FloatArray,
    human: Sequence[float | None],
    clusters: Sequence[object] | NDArray[Any] | None = None,
    *,
    lam: float | None = None,
    clip: tuple[float, float] | None = None,
    level: float = 0.95,
    small_sample: bool = True,
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
    level, small_sample
        Confidence level and small-sample correction, as in :func:`ppi_leaderboard`.
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
    )
    return board.rows[0].ppi, board.rows[0].lam


def _check(
    models: Sequence[str],
    clusters: Sequence[object],
    judge: Sequence[float] | FloatArray,
    human: Sequence[Any],
) -> tuple[FloatArray, FloatArray]:
    if not len(models) == len(clusters) == len(judge) == len(human):
        raise UserError("models, clusters, judge and human columns must have the same length")
    if not len(models):
        raise UserError("prediction-powered inference needs judge scores")
    f = np.asarray(judge, dtype=float)
    y = np.asarray([np.nan if v is None else v for v in human], dtype=float)
    if not np.all(np.isfinite(f)):
        raise UserError("every judge score must be a finite number")
    if not np.any(~np.isnan(y)):
        raise UserError("prediction-powered inference needs some human-labelled items")
    return f, y


def ppi_leaderboard(
    models: Sequence[str],
    clusters: Sequence[object],
    judge: Sequence[float] | FloatArray,
    human: Sequence[float | None],
    *,
    level: float = 0.95,
    clip: tuple[float, float] | None = None,
    lam: float | None = None,
    small_sample: bool = True,
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

    Returns
    -------
    PPILeaderboard
        Models with no human label are left out (nothing to correct them with); with no
        unlabelled item λ is 0 (the PPI mean is the human-only mean).
    """
    if not 0 < level < 1:
        raise UserError(f"level must be between 0 and 1, not {level!r}")

    def ss(clusters_labelled: int) -> int | None:
        return clusters_labelled if small_sample else None

    f, y = _check(models, clusters, judge, human)
    keys = {c: k for k, c in enumerate(dict.fromkeys(str(c) for c in clusters))}
    cl = np.array([keys[str(c)] for c in clusters])
    C = len(keys)
    marr = np.asarray([str(m) for m in models])
    parts: dict[str, _ModelParts] = {}
    for m in sorted(set(marr.tolist())):
        p = _ModelParts(np.flatnonzero(marr == m), cl, C, f, y)
        if p.n_lab.sum() > 0:
            parts[m] = p
    if not parts:
        raise UserError("no model has both judge scores and human labels")
    lams, phis, ests = {}, {}, {}
    for m, p in parts.items():
        if not p.has_unlabelled:
            lam_m = 0.0
        elif lam is not None:
            lam_m = float(lam)
        else:
            denom = float(np.sum(p.b**2))
            lam_m = -float(np.sum(p.a * p.b)) / denom if denom > 0 else 0.0
            if clip is not None:
                lam_m = float(np.clip(lam_m, *clip))
        lams[m] = lam_m
        gap = (p.fu_bar - p.fl_bar) if p.has_unlabelled else 0.0
        ests[m] = p.y_bar + lam_m * gap
        phis[m] = p.a + lam_m * p.b
    order = sorted(parts, key=lambda m: -ests[m])
    rows = []
    for m in order:
        p = parts[m]
        n_l, n_u = int(p.n_lab.sum()), int(p.n_unl.sum())
        nc_all, nc_l = int(np.sum(p.n_all > 0)), int(np.sum(p.n_lab > 0))
        var_h, var_p = float(np.sum(p.a**2)), float(np.sum(phis[m] ** 2))
        gain = var_h / var_p if var_p > 0 else None
        rows.append(
            PPIModelRow(
                model=m,
                ppi=_estimate(ests[m], phis[m], level, n_l + n_u, nc_all, ss(nc_l)),
                judge_only=_estimate(p.fa_bar, p.phi_fa, level, n_l + n_u, nc_all, ss(nc_all)),
                human_only=_estimate(p.y_bar, p.a, level, n_l, nc_l, ss(nc_l)),
                lam=lams[m],
                rectifier=float(p.y_bar - p.fl_bar),
                n_labelled=n_l,
                n_unlabelled=n_u,
                effective_n=None if gain is None else n_l * gain,
                ess_gain=gain,
                rank=1 + sum(ests[k] > ests[m] for k in parts),
            )
        )
    n_lab_cl = int(np.unique(cl[~np.isnan(y)]).size)
    claims = n_lab_cl >= MIN_CLUSTERS
    diffs = []
    for ma, mb in combinations(order, 2):
        pa, pb = parts[ma], parts[mb]
        n = int(pa.n_all.sum() + pb.n_all.sum())
        nl = int(pa.n_lab.sum() + pb.n_lab.sum())
        nc = int(np.sum((pa.n_all + pb.n_all) > 0))
        ncl = int(np.sum((pa.n_lab + pb.n_lab) > 0))
        d_ppi = _estimate(ests[ma] - ests[mb], phis[ma] - phis[mb], level, n, nc, ss(ncl))
        d_h = _estimate(pa.y_bar - pb.y_bar, pa.a - pb.a, level, nl, ncl, ss(ncl))
        d_j = _estimate(pa.fa_bar - pb.fa_bar, pa.phi_fa - pb.phi_fa, level, n, nc, ss(nc))
        var_h = float(np.sum((pa.a - pb.a) ** 2))
        var_p = float(np.sum((phis[ma] - phis[mb]) ** 2))
        diffs.append(
            PPIDifference(
                model_a=ma,
                model_b=mb,
                ppi=d_ppi,
                judge_only=d_j,
                human_only=d_h,
                ess_gain=var_h / var_p if var_p > 0 else None,
                distinguishable=bool(
                    claims
                    and d_ppi.lower is not None
                    and d_ppi.upper is not None
                    and (d_ppi.lower > 0 or d_ppi.upper < 0)
                ),
            )
        )
    return PPILeaderboard(
        rows=rows,
        differences=diffs,
        level=level,
        n_clusters=C,
        clip=clip,
        small_sample=small_sample,
        n_labelled_clusters=n_lab_cl,
        rank_claims=claims,
        warnings=[w for w in [few_clusters_warning(n_lab_cl, "human-labelled conversations")] if w],
    )


def ppi_leaderboard_markdown(board: PPILeaderboard) -> str:
    """The leaderboard as Markdown: per-model table and pairwise differences."""

    def cell(e: PPIEstimate) -> str:
        if e.estimate is None:
            return "—"
        if e.lower is None or e.upper is None:
            return f"{e.estimate:.3f}"
        return f"{e.estimate:.3f} [{e.lower:.3f}, {e.upper:.3f}]"

    pct = f"{board.level:.0%}"
    lines = [
        f"## Prediction-powered leaderboard ({pct} intervals)",
        "",
        *[f"> **Warning:** {w}\n" for w in board.warnings],
        "| rank | model | PPI++ | judge only | human only | λ | labelled / unlabelled | ESS gain |",
        "|---:|---|---|---|---|---:|---|---:|",
    ]
    for r in board.rows:
        gain = "—" if r.ess_gain is None else f"{r.ess_gain:.2f}×"
        lines.append(
            f"| {r.rank} | {r.model} | {cell(r.ppi)} | {cell(r.judge_only)} | "
            f"{cell(r.human_only)} | {r.lam:.2f} | {r.n_labelled} / {r.n_unlabelled} | {gain} |"
        )
    if board.differences:
        lines += [
            "",
            "### Pairwise differences",
            "",
            "| difference | PPI++ | judge only | human only | ESS gain | distinguishable |",
            "|---|---|---|---|---:|---|",
        ]
        for d in board.differences:
            gain = "—" if d.ess_gain is None else f"{d.ess_gain:.2f}×"
            lines.append(
                f"| {d.model_a} − {d.model_b} | {cell(d.ppi)} | {cell(d.judge_only)} | "
                f"{cell(d.human_only)} | {gain} | {'yes' if d.distinguishable else 'no'} |"
            )
    lines += ["", f"{board.method}; {board.n_clusters} clusters. {board.note}", ""]
    return "\n".join(lines)


class PPIColumns(ResultModel):
    """Judge scores joined with human labels, ready for :func:`ppi_leaderboard`."""

    models: list[str]
    clusters: list[str]
    judge: list[float]
    human: list[float | None]
    dimension: str
    """The human dimension used."""
    n_human_items: int
    """Items with a numeric human value on that dimension."""
    n_matched: int
    """Of those, items the judge scored (ok judgments)."""
    unmatched_examples: list[str]
    """Up to five human-labelled item ids the judge did not score."""


def ppi_columns(
    judgments: Sequence[Judgment],
    ratings: Sequence[Rating],
    *,
    field: Literal["normalized", "overall"] = "normalized",
    dimension: str | None = None,
    human_scale: tuple[float, float] | None = None,
) -> PPIColumns:
    """Join ok judgments with human ratings by item id (humans averaged per item).

    Parameters
    ----------
    judgments
        The judge's judgments (``candidate_model`` is the model, ``conversation_id`` the
        cluster); failed ones are skipped.
    ratings
        Human ``Rating`` records; non-numeric and missing values are ignored.
    field
        Judge score used: ``normalized`` (0–1) or ``overall`` (rubric scale).
    dimension
        Human dimension; default ``overall`` if present, else the only dimension.
    human_scale
        ``(low, high)`` to map human values to 0–1 (``(v − low) / (high − low)``), so they
        share the judge's ``normalized`` scale.
    """
    dims = sorted({r.dimension for r in ratings})
    if dimension is None:
        if "overall" in dims or len(dims) == 1:
            dimension = "overall" if "overall" in dims else dims[0]
        else:
            raise UserError(f"human labels have several dimensions {dims[:8]}; choose one")
    if dimension not in dims:
        raise UserError(f"no human label on dimension {dimension!r}; dimensions: {dims[:8]}")
    values: dict[str, list[float]] = {}
    for r in ratings:
        if r.dimension != dimension or r.value is None or isinstance(r.value, str):
            continue
        v = float(r.value)
        if human_scale is not None:
            lo, hi = human_scale
            v = (v - lo) / (hi - lo)
        values.setdefault(r.item_id, []).append(v)
    means = {k: float(np.mean(v)) for k, v in values.items()}
    models: list[str] = []
    clusters: list[str] = []
    judge: list[float] = []
    human: list[float | None] = []
    seen: set[str] = set()
    for j in judgments:
        val = j.normalized if field == "normalized" else j.overall
        if j.status != "ok" or val is None or j.candidate_model is None or j.item_id in seen:
            continue
        seen.add(j.item_id)
        models.append(j.candidate_model)
        clusters.append(j.conversation_id or j.item_id)
        judge.append(float(val))
        human.append(means.get(j.item_id))
    unmatched = sorted(set(means) - seen)
    return PPIColumns(
        models=models,
        clusters=clusters,
        judge=judge,
        human=human,
        dimension=dimension,
        n_human_items=len(means),
        n_matched=len(means) - len(unmatched),
        unmatched_examples=unmatched[:5],
    )
