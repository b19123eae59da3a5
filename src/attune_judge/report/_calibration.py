"""Sections for a calibration layer ``CalibrationReport`` (judge vs people, per dimension), and
the plain figure data (rater matrix, confusion counts, calibration curve) computed from ratings.

:func:`calibration_report_sections` reads the report model (or its dump);
:func:`calibration_figure_data` needs the raw ``Rating`` records and returns the typed parts a
command stores in ``summary.json`` (``calibration.figures``, a
:class:`~attune_judge.runs.CalibrationBlock`) for :func:`write_report`;
:func:`~attune_judge.report.write_calibration_run` (in ``_writers``) does both and writes the
run directory (for ``calibrate``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.calibration import (
    CalibrationReport,
    HumanCeiling,
    JudgeReport,
    Metric,
    RatingTable,
    aggregate_raters,
    pairwise_matrix,
    ratings_to_table,
)
from attune_judge.report._agreement import metrics_table
from attune_judge.report._blocks import Figure, KeyValues, Note, Section, Table, slugify
from attune_judge.report._calibration_part import WORST_ITEMS, binary_table, calibration_part
from attune_judge.report._fig_scores import grouped_forest_plot
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num, fmt_pct
from attune_judge.runs import (
    AgreementMatrix,
    CalibrationCurve,
    CalibrationPart,
    Confusion,
    Disagreement,
)

__all__ = [
    "calibration_figure_data",
    "calibration_report_sections",
]

MAX_CATEGORIES = 12
"""Largest number of distinct values drawn as a confusion matrix / calibration curve."""


def _ceiling_section(judge: str, ceiling: HumanCeiling, key: str) -> Section:
    rows, metric = ceiling.rows, ceiling.metric
    section = Section(f"Human ceiling: {judge}")
    none = Metric(name="", estimate=None)
    table_rows = []
    for r in rows:
        h, j = r.human_vs_rest, r.judge_vs_rest or none
        table_rows.append(
            [
                r.human,
                fmt_num(h.estimate),
                fmt_interval(h.lower, h.upper),
                fmt_num(j.estimate),
                fmt_interval(j.lower, j.upper),
            ]
        )
    table_rows.append(["mean", fmt_num(ceiling.mean_human), "", fmt_num(ceiling.mean_judge), ""])
    section.blocks.append(
        Table(
            ["left-out human", "human vs the rest", "interval", "judge vs the rest", "interval"],
            table_rows,
            "lrrrr",
            caption=(
                f"{metric}: each human against the {ceiling.aggregate} of the "
                "other humans, and the judge against the same aggregate. The mean of the first "
                "column is the human ceiling."
            ),
        )
    )
    if rows:
        series = {
            "human vs the other humans": tuple(
                [getattr(r.human_vs_rest, k) for r in rows] for k in ("estimate", "lower", "upper")
            ),
            "judge vs the same humans": tuple(
                [getattr(r.judge_vs_rest or none, k) for r in rows]
                for k in ("estimate", "lower", "upper")
            ),
        }
        section.blocks.append(
            Figure(
                f"{slugify(key)}-ceiling",
                grouped_forest_plot(
                    [f"without {r.human}" for r in rows],
                    series,  # type: ignore[arg-type]
                    title=f"Judge vs human ceiling ({metric})",
                    xlabel=metric,
                    xlim=None,
                ),
                alt=f"Leave-one-out {metric} of each human and of the judge {judge}.",
                caption="When the judge's points sit at or right of the humans', the judge agrees "
                "with people about as well as people agree with each other.",
            )
        )
    return section


def _judge_blocks(dim: str, j: JudgeReport) -> list[Section]:
    name, vs = j.judge, j.vs_humans
    sec = Section(f"{name} vs humans")
    sec.blocks.append(
        metrics_table(
            vs.metrics,
            caption=f"{name} against the humans' per-item {vs.y}; "
            f"n = {vs.n} items in {vs.n_clusters} clusters.",
        )
    )
    if j.binary is not None:
        sec.blocks.append(binary_table([j.binary]))
    alpha = j.alpha
    if alpha:
        sec.blocks.append(
            metrics_table(
                {
                    "α humans only": alpha.humans_only,
                    "α with the judge as one more coder": alpha.with_judge,
                    "difference": alpha.difference,
                },
                caption=f"Krippendorff's α ({alpha.level}).",
            )
        )
    alt = j.alt_test
    if alt:
        sec.blocks.append(
            KeyValues(
                [
                    ("alternative annotator test", "passed" if alt.passed else "not passed"),
                    ("winning rate ω", fmt_pct(alt.winning_rate)),
                    ("ε", fmt_num(alt.epsilon, 2)),
                    ("alignment", alt.alignment),
                ]
            )
        )
        sec.blocks.extend(Note(w, "warning") for w in alt.warnings)
    out = [sec]
    if j.ceiling:
        out.append(_ceiling_section(name, j.ceiling, f"calibration-{dim}-{name}"))
    return out


def _metric_line(m: Metric | None) -> str:
    m = m or Metric(name="", estimate=None)
    return f"{fmt_num(m.estimate)} {fmt_interval(m.lower, m.upper)}"


def calibration_report_sections(
    report: CalibrationReport | Mapping[str, Any],
    *,
    figures: Mapping[str, CalibrationPart] | None = None,
) -> list[Section]:
    """One section per dimension of a ``CalibrationReport``.

    Parameters
    ----------
    report
        ``CalibrationReport`` or its dump.
    figures
        Optional ``dimension -> CalibrationPart`` (heatmap, confusion, curve; from
        :func:`calibration_figure_data`) drawn in the dimension's section.
    """
    if not isinstance(report, CalibrationReport):
        report = CalibrationReport.model_validate(report)
    out = []
    for d in report.dimensions:
        dim, join = d.dimension, d.join
        sec = Section(f"Dimension: {dim}")
        sec.blocks.append(
            KeyValues(
                [
                    ("humans", f"{len(d.humans)}: {', '.join(d.humans)}"),
                    ("judge dimension", d.judge_dimension),
                    ("level of measurement", d.level),
                    ("humans aggregated by", d.aggregate),
                    ("items matched", fmt_int(join.matched)),
                    ("only human / only judge", f"{join.left_only} / {join.right_only}"),
                    ("α among humans", _metric_line(d.human_alpha)),
                    *(
                        (label, _metric_line(m))
                        for label, m in (
                            ("Fleiss' κ among humans", d.fleiss_humans),
                            ("Fleiss' κ, humans and judge", d.fleiss_with_judges),
                        )
                        if m
                    ),
                ]
            )
        )
        sec.blocks.extend(Note(flag, "warning") for flag in d.flags)
        for j in d.judges:
            sec.subsections.extend(_judge_blocks(dim, j))
        fig = (figures or {}).get(dim)
        am = fig.agreement_matrix if fig else None
        if fig and am and am.ceiling is None:
            # the leave-one-out human ceiling of the same metric, when the report has it
            same = [j.ceiling for j in d.judges if j.ceiling and j.ceiling.metric == am.metric]
            if same and same[0].mean_human is not None:
                am = am.model_copy(update={"ceiling": same[0].mean_human})
                fig = fig.model_copy(update={"agreement_matrix": am})
        if fig:
            sec.subsections.extend(calibration_part("", fig, f"calibration-{slugify(dim)}"))
        out.append(sec)
    return out


def _label(v: Any) -> str:
    """A category label: ``3`` for 3.0, ``2.50`` for 2.5, the string otherwise."""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() else fmt_num(v, 2)
    return str(v)


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def calibration_figure_data(
    human: Sequence[Any],
    judge: Sequence[Any],
    *,
    metric: str = "spearman",
    how: str = "median",
) -> dict[str, CalibrationPart]:
    """Figure data per dimension from ``Rating`` records (humans and a judge).

    Returns ``dimension -> CalibrationPart`` (``agreement_matrix``, ``confusion``,
    ``calibration_curve``): the rater ×
    rater matrix of ``metric`` (point estimates; judges listed in ``judges``), and — when both
    sides use at most :data:`MAX_CATEGORIES` values — the confusion counts of judge vs the
    humans' per-item ``how`` aggregate and the mean human aggregate at each judge value.
    Dimensions are matched by name (or the only one on each side).
    """
    hdims = sorted({r.dimension for r in human})
    jdims = sorted({r.dimension for r in judge})
    pairs = [(d, d) for d in hdims if d in jdims]
    if not pairs and len(hdims) == 1 and len(jdims) == 1:
        pairs = [(hdims[0], jdims[0])]
    out: dict[str, CalibrationPart] = {}
    for hdim, jdim in pairs:
        ht, jt = ratings_to_table(human, hdim), ratings_to_table(judge, jdim)
        jrows = {it: jt.values[i] for i, it in enumerate(jt.items)}
        items = [it for it in ht.items if it in jrows]
        hidx = {it: i for i, it in enumerate(ht.items)}

        table = RatingTable(
            items,
            ht.raters + jt.raters,
            [ht.values[hidx[it]] + jrows[it] for it in items],
            [ht.clusters[hidx[it]] for it in items],
            hdim,
        )
        entry = CalibrationPart()
        if len(table.raters) >= 2 and items:
            pm = pairwise_matrix(table, metric, B=1)
            entry.agreement_matrix = AgreementMatrix(
                raters=pm.raters, matrix=pm.estimate, metric=metric, judges=list(jt.raters)
            )
        agg_how = how if table.numeric else "majority"
        agg = aggregate_raters(table, ht.raters, agg_how)  # type: ignore[arg-type]
        for j in jt.raters:
            col = table.column(j)
            pairs_v = [
                (a, b) for a, b in zip(agg, col, strict=True) if a is not None and b is not None
            ]
            cats = sorted({str(v) for p in pairs_v for v in p})
            if pairs_v and len(cats) <= MAX_CATEGORIES:
                keys = sorted({v for p in pairs_v for v in p}, key=lambda v: (str(type(v)), v))
                counts = Counter((keys.index(a), keys.index(b)) for a, b in pairs_v)
                entry.confusion = Confusion(
                    categories=[_label(v) for v in keys],
                    counts=[[counts[(r, c)] for c in range(len(keys))] for r in range(len(keys))],
                    human_label=f"humans ({agg_how})",
                    judge_label=j,
                )
            if pairs_v and _numeric([b for _, b in pairs_v]) and _numeric([a for a, _ in pairs_v]):
                by: dict[float, list[float]] = defaultdict(list)
                for a, b in pairs_v:
                    by[float(b)].append(float(a))
                if len(by) <= MAX_CATEGORIES * 2:
                    xs = sorted(by)
                    humans_seen = [float(a) for a, _ in pairs_v]
                    entry.calibration_curve = CalibrationCurve(
                        judge_scores=xs,
                        human_means=[sum(by[x]) / len(by[x]) for x in xs],
                        counts=[len(by[x]) for x in xs],
                        # same scale when the judge's values lie inside the humans' range
                        identity=min(humans_seen) <= xs[0] and xs[-1] <= max(humans_seen),
                    )
            if pairs_v and _numeric([v for p in pairs_v for v in p]):
                pairs_i = [
                    (it, float(a), float(b))
                    for it, a, b in zip(items, agg, col, strict=True)
                    if a is not None and b is not None and a != b
                ]
                pairs_i.sort(key=lambda t: (-abs(t[2] - t[1]), t[0]))
                entry.disagreements = [
                    Disagreement(item_id=it, judge=b, humans=a, difference=abs(b - a))
                    for it, a, b in pairs_i[:WORST_ITEMS]
                ]
            break  # one judge per dimension in the figures (the first)
        out[hdim] = entry
    return out
