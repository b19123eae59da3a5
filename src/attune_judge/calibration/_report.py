"""One call from human and judge labels to a full agreement report (used by the CLI)."""

from __future__ import annotations

from collections.abc import Sequence

from attune_judge.calibration._alt_test import AltTestResult, alternative_annotator_test
from attune_judge.calibration._pairwise import PairAgreement, pair_agreement
from attune_judge.calibration._raters import (
    AlphaWithJudge,
    HumanCeiling,
    aggregate_raters,
    alpha_with_judge,
    human_ceiling,
)
from attune_judge.calibration._reliability import AlphaLevel, krippendorff_alpha
from attune_judge.calibration._results import JoinReport, Metric, ResultModel
from attune_judge.calibration._table import RatingTable, join_report, ratings_to_table
from attune_judge.data import Rating
from attune_judge.errors import UserError

__all__ = ["CalibrationReport", "DimensionReport", "JudgeReport", "calibrate"]


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
    join: JoinReport
    """Item matching between the human and judge labels."""
    human_alpha: Metric | None
    """α among humans alone."""
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
    items = sorted(set(human.items) & set(judge.items))
    hi = {it: i for i, it in enumerate(human.items)}
    ji = {it: i for i, it in enumerate(judge.items)}
    clash = [r for r in judge.raters if r in human.raters]
    if clash:
        raise UserError(f"rater name(s) {clash} appear in both the human and the judge labels")
    values = [human.values[hi[it]] + judge.values[ji[it]] for it in items]
    return RatingTable(
        items,
        human.raters + judge.raters,
        values,
        [human.clusters[hi[it]] for it in items],
        human.dimension,
        {**human.groups, **judge.groups},
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


def calibrate(
    human: Sequence[Rating],
    judge: Sequence[Rating],
    *,
    level: AlphaLevel = "ordinal",
    dimensions: Sequence[str] | None = None,
    B: int = 2_000,
    conf_level: float = 0.95,
    seed: int = 0,
    epsilon: float = 0.2,
) -> CalibrationReport:
    """Compare judge ratings with human ratings, dimension by dimension.

    Parameters
    ----------
    human, judge
        Long ``Rating`` records; items are matched on ``item_id``. Clusters come from the
        human records.
    level
        Level of measurement for Krippendorff's α.
    dimensions
        Only these (human) dimensions; default all shared dimensions.
    B, conf_level, seed
        Bootstrap replicates (2,000), confidence level, seed.
    epsilon
        ε of the alternative annotator test.
    """
    if not human or not judge:
        raise UserError("both the human and the judge labels must be non-empty")
    kw = {"B": B, "level": conf_level, "seed": seed}
    reports = []
    for hdim, jdim in _dimension_pairs(human, judge):
        if dimensions and hdim not in dimensions:
            continue
        ht = ratings_to_table(human, hdim)
        jt = ratings_to_table(judge, jdim)
        join = join_report(ht.items, jt.items)
        table = _merge(ht, jt)
        humans = ht.raters
        numeric = table.numeric
        n_single = sum(
            1 for row in table.values if sum(v is not None for v in row[: len(humans)]) < 2
        )
        flags = []
        if len(humans) >= 2 and n_single:
            flags.append(f"{n_single} items have fewer than two human ratings")
        if not numeric and level != "nominal":
            flags.append("non-numeric values: α computed at the nominal level")
        lvl: AlphaLevel = level if numeric else "nominal"
        how = {"nominal": "majority", "ordinal": "median"}.get(lvl, "mean")
        alpha_kw = {"B": B, "conf_level": conf_level, "seed": seed}
        h_alpha = (
            krippendorff_alpha(table.subset(humans), lvl, **alpha_kw)  # type: ignore[arg-type]
            if len(humans) >= 2
            else None
        )
        judges = []
        for j in jt.raters:
            agg = aggregate_raters(table, humans, how)  # type: ignore[arg-type]
            jcol = table.column(j)
            keep = [i for i in range(len(agg)) if agg[i] is not None and jcol[i] is not None]
            vs = pair_agreement(
                [jcol[i] for i in keep],  # type: ignore[misc]
                [agg[i] for i in keep],  # type: ignore[misc]
                [table.clusters[i] for i in keep],
                x_name=j,
                y_name=f"humans({how})",
                **kw,  # type: ignore[arg-type]
            )
            many = len(humans) >= 2
            metric = "spearman" if numeric else "cohen_kappa"
            judges.append(
                JudgeReport(
                    judge=j,
                    vs_humans=vs,
                    alpha=alpha_with_judge(table, humans, j, lvl, **alpha_kw) if many else None,  # type: ignore[arg-type]
                    ceiling=human_ceiling(table, humans, j, metric=metric, how=how, **kw)  # type: ignore[arg-type]
                    if many
                    else None,
                    alt_test=alternative_annotator_test(table, humans, j, epsilon=epsilon)
                    if many
                    else None,
                )
            )
        reports.append(
            DimensionReport(
                dimension=hdim,
                judge_dimension=jdim,
                level=lvl,
                humans=humans,
                aggregate=how,
                join=join,
                human_alpha=h_alpha,
                judges=judges,
                flags=flags,
            )
        )
    if not reports:
        raise UserError(f"none of the dimensions {list(dimensions or [])} is in both files")
    return CalibrationReport(
        dimensions=reports,
        settings={
            "B": B,
            "seed": seed,
            "level": conf_level,
            "alpha_level": level,
            "epsilon": epsilon,
        },
    )
