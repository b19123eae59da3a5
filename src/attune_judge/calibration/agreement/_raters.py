"""Judge versus people: rater matrices, group aggregates, the human ceiling, α with the judge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.agreement._pairwise import PairAgreement, pair_agreement
from attune_judge.calibration.agreement._reliability import (
    AlphaLevel,
    coincidence_data,
    krippendorff_alpha,
)
from attune_judge.calibration.agreement._table import RatingTable, Value
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic
from attune_judge.errors import UserError

__all__ = [
    "AlphaWithJudge",
    "CeilingRow",
    "HumanCeiling",
    "PairwiseMatrix",
    "aggregate_raters",
    "alpha_with_judge",
    "group_agreement",
    "human_ceiling",
    "pairwise_matrix",
]

Aggregate = Literal["mean", "median", "majority"]


def _aggregate_row(vals: list[Value], how: Aggregate) -> Value:
    present = [v for v in vals if v is not None]
    if not present:
        return None
    if how == "majority":
        labels, counts = np.unique(np.asarray([str(v) for v in present]), return_counts=True)
        tied = [lab for lab, c in zip(labels, counts, strict=True) if c == counts.max()]
        lookup = {str(v): v for v in present}
        if len(tied) == 1:
            return lookup[tied[0]]
        if all(isinstance(v, float) for v in present):  # tie: closest to the median, then lower
            med = float(np.median([float(v) for v in present]))
            return min((float(lookup[t]) for t in tied), key=lambda x: (abs(x - med), x))
        return lookup[sorted(tied)[0]]
    if not all(isinstance(v, float) for v in present):
        raise UserError(f"aggregate '{how}' needs numeric values; use 'majority' for categories")
    nums = [float(v) for v in present]
    return float(np.mean(nums) if how == "mean" else np.median(nums))


def aggregate_raters(
    table: RatingTable, raters: Sequence[str], how: Aggregate = "mean"
) -> list[Value]:
    """One value per item aggregating ``raters``: ``mean``, ``median`` or ``majority``.

    ``majority`` is the most frequent value; a tie between numbers goes to the tied value
    closest to the item's median (then the lower one), between categories to the first in
    sorted order. Items none of the raters rated are ``None``.
    """
    idx = [table.raters.index(r) for r in raters]
    return [_aggregate_row([row[j] for j in idx], how) for row in table.values]


def _both(x: list[Value], y: list[Value]) -> list[int]:
    return [i for i in range(len(x)) if x[i] is not None and y[i] is not None]


def _common(x: list[Value], y: list[Value], clusters: list[str]) -> tuple[list, list, list[str]]:
    keep = _both(x, y)
    return [x[i] for i in keep], [y[i] for i in keep], [clusters[i] for i in keep]


def _pair(
    x: list[Value], y: list[Value], clusters: list[str], x_name: str, y_name: str, **kw: Any
) -> PairAgreement:
    xs, ys, cl = _common(x, y, clusters)
    return pair_agreement(xs, ys, cl, x_name=x_name, y_name=y_name, **kw)


class PairwiseMatrix(ResultModel):
    """One agreement metric for every pair of raters."""

    raters: list[str]
    """Row and column order."""
    metric: str
    """The metric."""
    estimate: list[list[float | None]]
    """Symmetric matrix of estimates (diagonal ``None``)."""
    n: list[list[int]]
    """Common items per pair."""
    pairs: list[Metric]
    """The full result (with interval) for each pair i < j, row-major."""


def pairwise_matrix(
    table: RatingTable,
    metric: str = "spearman",
    *,
    raters: Sequence[str] | None = None,
    **kw: Any,
) -> PairwiseMatrix:
    """``metric`` between every pair of raters on their common items (bootstrap ``kw``)."""
    names = list(raters or table.raters)
    p = len(names)
    est: list[list[float | None]] = [[None] * p for _ in range(p)]
    ns = [[0] * p for _ in range(p)]
    pairs = []
    for i in range(p):
        for j in range(i + 1, p):
            xs, ys, cl = _common(table.column(names[i]), table.column(names[j]), table.clusters)
            if len(xs) < 2:
                m = Metric(
                    name=f"{metric}[{names[i]},{names[j]}]",
                    estimate=None,
                    undefined_reason="fewer than two common items",
                )
            else:
                res = pair_agreement(
                    xs, ys, cl, x_name=names[i], y_name=names[j], metrics=[metric], **kw
                )
                m = res.metrics.get(metric) or Metric(
                    name=metric, estimate=None, undefined_reason="not defined for these values"
                )
                m = m.model_copy(update={"name": f"{metric}[{names[i]},{names[j]}]"})
            est[i][j] = est[j][i] = m.estimate
            ns[i][j] = ns[j][i] = len(xs)
            pairs.append(m)
    return PairwiseMatrix(raters=names, metric=metric, estimate=est, n=ns, pairs=pairs)


def group_agreement(
    table: RatingTable,
    group_a: Sequence[str],
    group_b: Sequence[str],
    *,
    how: Aggregate = "mean",
    names: tuple[str, str] = ("group_a", "group_b"),
    **kw: Any,
) -> PairAgreement:
    """Agreement of two groups of raters, each aggregated per item by ``how``."""
    a = aggregate_raters(table, group_a, how)
    b = aggregate_raters(table, group_b, how)
    return _pair(a, b, table.clusters, names[0], names[1], **kw)


class CeilingRow(ResultModel):
    """One left-out human: that human and the judge, each against the other humans."""

    human: str
    """The left-out human."""
    human_vs_rest: Metric
    """The human against the aggregate of the remaining humans, on every item the human and
    at least one other human rated (all human ratings; ``n`` says how many items)."""
    judge_vs_rest: Metric | None
    """The judge against the same aggregate, on the items of ``human_vs_rest`` the judge also
    rated (``None`` without a judge)."""
    human_vs_rest_judged: Metric | None = None
    """The human against the rest on exactly the items of ``judge_vs_rest`` — the
    like-for-like comparison when the judge did not rate every item (``None`` when it did, or
    without a judge)."""


class HumanCeiling(ResultModel):
    """Leave-one-out agreement among humans, shown beside judge–human agreement."""

    metric: str
    """Agreement metric."""
    aggregate: str
    """How the remaining humans are aggregated."""
    rows: list[CeilingRow]
    """One row per human."""
    mean_human: float | None
    """Mean of the defined human-vs-rest estimates (the ceiling)."""
    mean_judge: float | None
    """Mean of the defined judge-vs-rest estimates."""


def human_ceiling(
    table: RatingTable,
    humans: Sequence[str],
    judge: str | None = None,
    *,
    metric: str = "spearman",
    how: Aggregate = "mean",
    **kw: Any,
) -> HumanCeiling:
    """Each human versus the aggregate of the other humans (and the judge versus the same).

    With ``table.weights`` each figure is weighted (:func:`pair_agreement`'s ``weights``).
    The human's figure uses every item the human and another human rated (all human
    ratings); the judge's uses those of them the judge rated. When the judge skipped some,
    ``human_vs_rest_judged`` gives the human's figure on the judge's items too (like for like).
    """
    if len(humans) < 2:
        raise UserError("the human ceiling needs at least two human raters")
    rows = []
    for h in humans:
        rest = aggregate_raters(table, [o for o in humans if o != h], how)
        mine = table.column(h)
        jcol = table.column(judge) if judge else [None] * len(mine)

        def one(x: list[Value], name: str, h: str = h, rest: list[Value] = rest) -> Metric:
            xs, ys, cl = _common(x, rest, table.clusters)
            if len(xs) < 2:
                return Metric(name=metric, estimate=None, undefined_reason="fewer than two items")
            w = table.weights
            res = pair_agreement(
                xs,
                ys,
                cl,
                x_name=name,
                y_name=f"rest({h})",
                metrics=[metric],
                weights=None if w is None else [w[i] for i in _both(x, rest)],
                **kw,
            )
            return res.metrics.get(metric) or Metric(
                name=metric, estimate=None, undefined_reason="not defined for these values"
            )

        judged = [v if jcol[i] is not None else None for i, v in enumerate(mine)]
        partial = judge is not None and any(
            v is not None and r is not None and jcol[i] is None
            for i, (v, r) in enumerate(zip(mine, rest, strict=True))
        )
        rows.append(
            CeilingRow(
                human=h,
                human_vs_rest=one(mine, h),
                judge_vs_rest=one(
                    [jcol[i] if mine[i] is not None else None for i in range(len(mine))], judge
                )
                if judge
                else None,
                human_vs_rest_judged=one(judged, h) if partial else None,
            )
        )
    hs = [r.human_vs_rest.estimate for r in rows if r.human_vs_rest.estimate is not None]
    js = [
        r.judge_vs_rest.estimate
        for r in rows
        if r.judge_vs_rest is not None and r.judge_vs_rest.estimate is not None
    ]
    return HumanCeiling(
        metric=metric,
        aggregate=how,
        rows=rows,
        mean_human=float(np.mean(hs)) if hs else None,
        mean_judge=float(np.mean(js)) if js else None,
    )


class AlphaWithJudge(ResultModel):
    """Is the judge like one more person? α of humans alone and with the judge as a coder."""

    level: str
    """Level of measurement."""
    humans_only: Metric
    """α among the humans."""
    with_judge: Metric
    """α with the judge added as one more coder."""
    difference: Metric
    """``with_judge − humans_only`` on the same cluster draws (paired interval)."""


def alpha_with_judge(
    table: RatingTable,
    humans: Sequence[str],
    judge: str,
    measurement: AlphaLevel = "ordinal",
    *,
    scale: Sequence[float | str] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> AlphaWithJudge:
    """Krippendorff's α of the humans, of humans + judge, and their paired difference."""
    h = table.subset(list(humans))
    hj = table.subset([*humans, judge])
    kw: dict[str, Any] = {
        "scale": scale,
        "B": B,
        "level": level,
        "seed": seed,
        "method": method,
    }
    a_h = krippendorff_alpha(h, measurement, **kw)
    a_hj = krippendorff_alpha(hj, measurement, **kw)
    if a_h.estimate is None or a_hj.estimate is None:
        diff = Metric(
            name="alpha_difference",
            estimate=None,
            undefined_reason="α undefined with or without the judge",
        )
    else:
        # the same clusters (the table's) index both, so the same weights pair the draws;
        # only clusters with pairable values (with the judge: a superset of the humans') are
        # resampled — a conversation only the judge rated adds nothing to either α, and
        # drawing it would only change how many informative conversations a replicate holds
        dh, dhj = coincidence_data(h, measurement, scale), coincidence_data(hj, measurement, scale)
        idx = np.flatnonzero(dhj.pairable_clusters | dh.pairable_clusters)

        def stat(w: FloatArray) -> FloatArray:
            full = np.zeros((len(w), dh.n_clusters))
            full[:, idx] = w
            return dhj.alpha(full) - dh.alpha(full)

        diff = bootstrap_statistic(
            stat,
            len(idx),
            name="alpha_difference",
            B=B,
            level=level,
            seed=seed,
            method=method,
            n=dhj.n_values,
        )
    return AlphaWithJudge(level=measurement, humans_only=a_h, with_judge=a_hj, difference=diff)
