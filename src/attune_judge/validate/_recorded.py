"""Demo part a: the three recorded LLM judges (and the crowd) against the experts.

Data: the shipped empathic-communication set (Kumar et al. 2025), 4 sources x 50
conversations x 21 dimensions. For every dimension each judge is compared with the median of
the three experts (quadratic-weighted κ, Spearman, ...), Krippendorff's α is computed with and
without the judge as one more coder, the judge is put beside the leave-one-out inter-expert
ceiling (for Spearman and for quadratic-weighted κ), and the alternative annotator test is run.
Every interval is a cluster bootstrap over conversations.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import (
    CalibrationReport,
    HumanCeiling,
    calibrate,
    fmt_metric,
    fmt_num,
    human_ceiling,
    ratings_to_table,
)
from attune_judge.data import Rating
from attune_judge.runs import JudgeRow

__all__ = [
    "JudgeRow",
    "RecordedJudges",
    "judge_rows",
    "judge_rows_markdown",
    "recorded_judges_vs_experts",
]


class RecordedJudges(BaseModel):
    """Result of demo part a."""

    rows: list[JudgeRow] = Field(default_factory=list)
    """One row per dimension x judge."""
    reports: dict[str, CalibrationReport] = Field(default_factory=dict)
    """The full calibration report per source."""
    kappa_ceilings: dict[str, HumanCeiling] = Field(default_factory=dict)
    """κ_qw leave-one-out ceilings, keyed ``dimension/judge``."""


def recorded_judges_vs_experts(
    ratings: Sequence[Rating],
    *,
    judges: Sequence[str] = ("gpt", "claude", "gemini", "crowd"),
    dimensions: Sequence[str] | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> RecordedJudges:
    """Validate recorded judges against the experts, dimension by dimension.

    Parameters
    ----------
    ratings
        Empathic-communication ratings (experts in group ``experts``; judges by rater name).
    judges
        Rater names to treat as judges.
    dimensions
        Only these dimensions (default all).
    B, seed
        Bootstrap replicates and seed.
    """
    out = RecordedJudges()
    sources = sorted({str(r.metadata.get("source")) for r in ratings})
    for source in sources:
        mine = [r for r in ratings if r.metadata.get("source") == source]
        if dimensions:
            mine = [r for r in mine if r.dimension in dimensions]
        human = [r for r in mine if r.rater_group == "experts"]
        judge = [r for r in mine if r.rater in judges]
        if not human or not judge:
            continue
        report = calibrate(human, judge, measurement="ordinal", B=B, seed=seed)
        out.reports[source] = report
        out.rows += judge_rows(
            report, [*human, *judge], source, B=B, seed=seed, ceilings=out.kappa_ceilings
        )
    return out


def judge_rows(
    report: CalibrationReport,
    ratings: Sequence[Rating],
    source: str,
    *,
    B: int = DEFAULT_B,
    seed: int = 0,
    ceilings: dict[str, HumanCeiling] | None = None,
) -> list[JudgeRow]:
    """Brief rows from a calibration report, adding the κ_qw leave-one-out ceiling.

    ``ratings`` must hold the human and judge ratings the report was computed from.
    """
    rows = []
    for dim in report.dimensions:
        recs = [r for r in ratings if r.dimension in (dim.dimension, dim.judge_dimension)]
        table = ratings_to_table(
            [r.model_copy(update={"dimension": dim.dimension}) for r in recs], dim.dimension
        )
        for jr in dim.judges:
            ceiling = None
            if len(dim.humans) >= 2:
                ceiling = human_ceiling(
                    table,
                    dim.humans,
                    jr.judge,
                    metric="cohen_kappa_quadratic",
                    how="median",
                    B=B,
                    seed=seed,
                )
                if ceilings is not None:
                    ceilings[f"{dim.dimension}/{jr.judge}"] = ceiling
            rows.append(
                JudgeRow(
                    source=source,
                    dimension=dim.dimension,
                    judge=jr.judge,
                    n=jr.vs_humans.n,
                    kappa_qw=jr.vs_humans.metrics.get("cohen_kappa_quadratic"),
                    spearman=jr.vs_humans.metrics.get("spearman"),
                    alpha_humans=jr.alpha.humans_only if jr.alpha else dim.human_alpha,
                    alpha_with_judge=jr.alpha.with_judge if jr.alpha else None,
                    kappa_ceiling_humans=ceiling.mean_human if ceiling else None,
                    kappa_ceiling_judge=ceiling.mean_judge if ceiling else None,
                    spearman_ceiling_humans=jr.ceiling.mean_human if jr.ceiling else None,
                    spearman_ceiling_judge=jr.ceiling.mean_judge if jr.ceiling else None,
                    alt_test_winning_rate=jr.alt_test.winning_rate if jr.alt_test else None,
                    alt_test_passed=jr.alt_test.passed if jr.alt_test else None,
                )
            )
    return rows


def judge_rows_markdown(rows: Sequence[JudgeRow]) -> str:
    """A compact table: each judge beside the inter-expert ceiling, per dimension."""
    lines = [
        "| source | dimension | judge | κ_qw vs experts [95% CI] | Spearman [95% CI] | "
        "α experts → with judge | κ_qw ceiling: experts / judge | ρ ceiling: experts / judge "
        "| alt-test ω |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        alpha = f"{fmt_metric(r.alpha_humans, 2)} → {fmt_metric(r.alpha_with_judge, 2)}"
        alt = "—" if r.alt_test_winning_rate is None else f"{r.alt_test_winning_rate:.2f}"
        if r.alt_test_passed:
            alt += " (passed)"
        lines.append(
            f"| {r.source} | {r.dimension} | {r.judge} | {fmt_metric(r.kappa_qw, 2)} | "
            f"{fmt_metric(r.spearman, 2)} | {alpha} | "
            f"{fmt_num(r.kappa_ceiling_humans, 2)} / {fmt_num(r.kappa_ceiling_judge, 2)} | "
            f"{fmt_num(r.spearman_ceiling_humans, 2)} / {fmt_num(r.spearman_ceiling_judge, 2)} | "
            f"{alt} |"
        )
    return "\n".join(lines) + "\n"
