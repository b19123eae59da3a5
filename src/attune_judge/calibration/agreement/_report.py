"""One call from human and judge labels to a full agreement report (used by the CLI)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import JoinReport, Metric, ResultModel
from attune_judge.calibration.agreement._alt_test import AltTestResult, alternative_annotator_test
from attune_judge.calibration.agreement._binary import BinaryAgreement, binary_agreement, is_binary
from attune_judge.calibration.agreement._pairwise import PairAgreement, pair_agreement
from attune_judge.calibration.agreement._raters import (
    AlphaWithJudge,
    HumanCeiling,
    aggregate_raters,
    alpha_with_judge,
    human_ceiling,
)
from attune_judge.calibration.agreement._reliability import (
    AlphaLevel,
    fleiss_kappa,
    krippendorff_alpha,
)
from attune_judge.calibration.agreement._table import (
    RatingTable,
    Value,
    join_report,
    ratings_to_table,
)
from attune_judge.calibration.resampling._bootstrap import few_clusters_warning
from attune_judge.calibration.resampling._bounded import check_level
from attune_judge.data import Rating
from attune_judge.errors import UserError

__all__ = ["CalibrationReport", "DimensionReport", "JudgeReport", "calibrate"]

WEIGHTED_FLAG = (
    "labels weighted by 1/inclusion probability (Hajek): judge vs humans, α, Fleiss' κ and the "
    "human ceiling are weighted; the alternative annotator test is NOT weighted (its "
    "per-annotator tests count every item once)"
)


class JudgeReport(ResultModel):
    """One judge against the humans on one dimension."""

    judge: str
    """The judge (rater name, usually a judge id)."""
    vs_humans: PairAgreement
    """Judge against the per-item aggregate of the humans."""
    alpha: AlphaWithJudge | None
    """α of humans alone and with the judge (needs two or more humans)."""
    ceiling: HumanCeiling | None
    """Leave-one-out human ceiling beside the judge (needs two or more humans)."""
    alt_test: AltTestResult | None
    """The alternative annotator test (needs two or more humans)."""
    binary: BinaryAgreement | None = None
    """When both sides are pass/fail (0/1, yes/no): TPR, TNR, precision, NPV, balanced
    accuracy and leniency of the judge against the humans' per-item aggregate (unweighted)."""


class DimensionReport(ResultModel):
    """Everything computed for one dimension."""

    dimension: str
    """Dimension (human name; the judge's when it differs is in ``judge_dimension``)."""
    judge_dimension: str
    """The judge's dimension that was compared."""
    level: str
    """Level of measurement used for α."""
    humans: list[str]
    """Human raters."""
    aggregate: str
    """How humans were aggregated per item: majority (nominal), median (ordinal) or mean
    (interval, ratio)."""
    scale: list[float] | None
    """Declared scale used by weighted κ (``None``: the observed categories)."""
    join: JoinReport
    """Item matching between the human and judge labels."""
    human_alpha: Metric | None
    """α among humans alone."""
    fleiss_humans: Metric | None = None
    """Fleiss' κ among the humans (values as categories), when there are three or more."""
    fleiss_with_judges: Metric | None = None
    """Fleiss' κ among the humans and the judges together, when they are three or more raters
    and at least two are humans."""
    judges: list[JudgeReport]
    """One entry per judge."""
    flags: list[str]
    """Data problems noticed (items with a single human rating, ...)."""


class CalibrationReport(ResultModel):
    """Agreement between a judge and people, per dimension."""

    dimensions: list[DimensionReport]
    """One report per compared dimension."""
    settings: dict[str, object]
    """B, seed, level, epsilon, ... as used."""


def _merge(human: RatingTable, judge: RatingTable) -> RatingTable:
    """All items of both tables (an outer join): humans' columns, then the judges'.

    Items rated by humans only keep their human ratings (Krippendorff's α handles the judge's
    missing value by design; dropping them would drop human disagreement), items rated by the
    judge only have no human value. Clusters come from the human records, else the judge's.
    """
    items = sorted(set(human.items) | set(judge.items))
    hi = {it: i for i, it in enumerate(human.items)}
    ji = {it: i for i, it in enumerate(judge.items)}
    clash = [r for r in judge.raters if r in human.raters]
    if clash:
        raise UserError(f"rater name(s) {clash} appear in both the human and the judge labels")
    none_h: list[Value] = [None] * len(human.raters)
    none_j: list[Value] = [None] * len(judge.raters)
    values = [
        (human.values[hi[it]] if it in hi else none_h)
        + (judge.values[ji[it]] if it in ji else none_j)
        for it in items
    ]
    return RatingTable(
        items,
        human.raters + judge.raters,
        values,
        [human.clusters[hi[it]] if it in hi else judge.clusters[ji[it]] for it in items],
        human.dimension,
        {**human.groups, **judge.groups},
        None
        if human.weights is None
        else [human.weights[hi[it]] if it in hi else 1.0 for it in items],
    )


def _dimension_pairs(human: Sequence[Rating], judge: Sequence[Rating]) -> list[tuple[str, str]]:
    hd = sorted({r.dimension for r in human})
    jd = sorted({r.dimension for r in judge})
    common = [d for d in hd if d in jd]
    if common:
        return [(d, d) for d in common]
    if len(hd) == 1 and len(jd) == 1:
        return [(hd[0], jd[0])]
    raise UserError(
        "no dimension in common between the human and judge labels",
        [f"human dimensions: {hd[:10]}", f"judge dimensions: {jd[:10]}"],
    )


def _declared_scale(records: Sequence[Rating]) -> list[float] | None:
    """Integer scale from ``metadata`` ``scale_min``/``scale_max`` when all records agree."""
    bounds = {(r.metadata.get("scale_min"), r.metadata.get("scale_max")) for r in records}
    if len(bounds) != 1:
        return None
    lo, hi = next(iter(bounds))
    if not isinstance(lo, int | float) or not isinstance(hi, int | float):
        return None
    if float(lo).is_integer() and float(hi).is_integer() and 0 < hi - lo <= 100:
        return [float(v) for v in range(int(lo), int(hi) + 1)]
    return None


def _judge_report(
    table: RatingTable,
    humans: list[str],
    judge: str,
    lvl: AlphaLevel,
    how: str,
    scale: list[float] | None,
    epsilon: float,
    kw: dict[str, Any],
) -> JudgeReport:
    agg = aggregate_raters(table, humans, how)  # type: ignore[arg-type]
    jcol = table.column(judge)
    keep = [i for i in range(len(agg)) if agg[i] is not None and jcol[i] is not None]
    x, y = [jcol[i] for i in keep], [agg[i] for i in keep]
    on_scale = scale is not None and all(v in scale for v in [*x, *y])
    vs = pair_agreement(
        x,  # type: ignore[arg-type]
        y,  # type: ignore[arg-type]
        [table.clusters[i] for i in keep],
        x_name=judge,
        y_name=f"humans({how})",
        scale=scale if on_scale else None,
        weights=None if table.weights is None else [table.weights[i] for i in keep],
        **kw,
    )
    binary = None
    if is_binary(x) and is_binary(y):
        binary = binary_agreement(
            x,
            y,
            [table.clusters[i] for i in keep],
            name=judge,
            B=kw["B"],
            level=kw["level"],
            seed=kw["seed"],
        )
    if len(humans) < 2:
        return JudgeReport(
            judge=judge, vs_humans=vs, alpha=None, ceiling=None, alt_test=None, binary=binary
        )
    alpha_kw = {"B": kw["B"], "level": kw["level"], "seed": kw["seed"]}
    return JudgeReport(
        judge=judge,
        binary=binary,
        vs_humans=vs,
        alpha=alpha_with_judge(table, humans, judge, lvl, **alpha_kw),
        ceiling=human_ceiling(
            table,
            humans,
            judge,
            metric="spearman" if table.numeric else "cohen_kappa",
            how=how,  # type: ignore[arg-type]
            **kw,
        ),
        alt_test=alternative_annotator_test(
            table,
            humans,
            judge,
            epsilon=epsilon,
            alignment="accuracy" if lvl == "nominal" else "neg_rmse" if table.numeric else "auto",
        ),
    )


def _dimension_report(
    human: Sequence[Rating],
    judge: Sequence[Rating],
    hdim: str,
    jdim: str,
    measurement: AlphaLevel,
    scale: Sequence[float] | None,
    epsilon: float,
    kw: dict[str, Any],
    weights: Mapping[str, float] | None = None,
) -> DimensionReport:
    hrecs = [r for r in human if r.dimension == hdim]
    ht = ratings_to_table(hrecs, hdim)
    if weights is not None:
        w = np.array([weights[it] for it in ht.items], dtype=float)
        ht.weights = (w / w.mean()).tolist()
    jt = ratings_to_table(judge, jdim)
    join = join_report(ht.items, jt.items)
    table = _merge(ht, jt)
    humans = ht.raters
    numeric = table.numeric
    n_single = sum(1 for row in table.values if sum(v is not None for v in row[: len(humans)]) == 1)
    flags = []
    if weights is not None:
        flags.append(WEIGHTED_FLAG)
    if len(humans) >= 2 and n_single:
        flags.append(f"{n_single} items have a single human rating (unpairable for α among humans)")
    few = few_clusters_warning(len(set(table.clusters)))
    if few:
        flags.append(few)
    if not numeric and measurement != "nominal":
        flags.append("non-numeric values: α computed at the nominal level")
    lvl: AlphaLevel = measurement if numeric else "nominal"
    how = {"nominal": "majority", "ordinal": "median"}.get(lvl, "mean")
    sc = list(scale) if scale is not None else (_declared_scale(hrecs) if numeric else None)
    if sc is not None:
        flags.append(f"declared scale {sc[0]:g}..{sc[-1]:g}: weighted κ uses its category index")
    h_alpha = (
        krippendorff_alpha(table.subset(humans), lvl, B=kw["B"], level=kw["level"], seed=kw["seed"])
        if len(humans) >= 2
        else None
    )
    fleiss_kw = {"B": kw["B"], "level": kw["level"], "seed": kw["seed"]}
    fleiss_h = fleiss_kappa(table.subset(humans), **fleiss_kw) if len(humans) >= 3 else None
    fleiss_all = (
        fleiss_kappa(table, **fleiss_kw)
        if len(humans) >= 2 and len(table.raters) >= 3 and len(table.raters) > len(humans)
        else None
    )
    return DimensionReport(
        dimension=hdim,
        judge_dimension=jdim,
        level=lvl,
        humans=humans,
        aggregate=how,
        scale=sc,
        join=join,
        human_alpha=h_alpha,
        fleiss_humans=fleiss_h,
        fleiss_with_judges=fleiss_all,
        judges=[_judge_report(table, humans, j, lvl, how, sc, epsilon, kw) for j in jt.raters],
        flags=flags,
    )


def calibrate(
    human: Sequence[Rating],
    judge: Sequence[Rating],
    *,
    measurement: AlphaLevel = "ordinal",
    dimensions: Sequence[str] | None = None,
    scale: Sequence[float] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    epsilon: float = 0.2,
    weights: Mapping[str, float] | None = None,
) -> CalibrationReport:
    """Compare judge ratings with human ratings, dimension by dimension.

    Parameters
    ----------
    human, judge
        Long ``Rating`` records; items are matched on ``item_id``. Clusters come from the
        human records.
    measurement
        Level of measurement for Krippendorff's α.
    dimensions
        Only these (human) dimensions; default all shared dimensions.
    scale
        Declared categories of the rating scale (weighted κ then uses their index); default:
        integers from the human records' ``metadata`` ``scale_min``..``scale_max`` when present,
        else the observed categories. Agreement against aggregates that fall off the scale
        (the median of an even number of raters) uses the observed categories.
    B, level, seed
        Bootstrap replicates (2,000), confidence level, seed.
    epsilon
        ε of the alternative annotator test.
    weights
        Item id → weight of its human labels (``1 / inclusion probability`` when they were
        drawn with unequal probabilities). Normalised to mean 1 over each dimension's
        human-labelled items (Hajek), they weight the judge-vs-humans agreement (every
        metric), α and Fleiss' κ (weighted coincidences / counts), the human ceiling; the
        alternative annotator test is not weighted, which the dimension's flags say.
    """
    check_level(level)
    if not human or not judge:
        raise UserError("both the human and the judge labels must be non-empty")
    kw: dict[str, Any] = {"B": B, "level": level, "seed": seed}
    reports = [
        _dimension_report(human, judge, hdim, jdim, measurement, scale, epsilon, kw, weights)
        for hdim, jdim in _dimension_pairs(human, judge)
        if not dimensions or hdim in dimensions
    ]
    if not reports:
        raise UserError(f"none of the dimensions {list(dimensions or [])} is in both files")
    return CalibrationReport(
        dimensions=reports,
        settings={
            "B": B,
            "seed": seed,
            "level": level,
            "alpha_level": measurement,
            "epsilon": epsilon,
        },
    )
