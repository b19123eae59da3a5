"""Sections for a calibration layer ``CalibrationReport`` (judge vs people, per dimension), and
the plain figure data (rater matrix, confusion counts, calibration curve) computed from ratings.

:func:`calibration_report_sections` reads the report model or its ``model_dump()``;
:func:`calibration_figure_data` needs the raw ``Rating`` records and returns plain dicts that a
command can store in ``summary.json`` (``calibration.figures``) for :func:`write_report`;
:func:`~attune_judge.report.write_calibration_run` (in ``_writers``) does both and writes the
run directory (for ``calibrate``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.report._agreement import metrics_table
from attune_judge.report._blocks import Figure, KeyValues, Note, Section, Table, slugify
from attune_judge.report._calibration_part import calibration_part
from attune_judge.report._fig_scores import grouped_forest_plot
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num, fmt_pct

__all__ = [
    "calibration_figure_data",
    "calibration_report_sections",
]

MAX_CATEGORIES = 12
"""Largest number of distinct values drawn as a confusion matrix / calibration curve."""


def _dump(obj: Any) -> Any:
    return obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj


def _ceiling_section(judge: str, ceiling: Mapping[str, Any], key: str) -> Section:
    rows = ceiling.get("rows") or []
    metric = str(ceiling.get("metric", "agreement"))
    section = Section(f"Human ceiling: {judge}")
    table_rows = []
    for r in rows:
        h, j = r.get("human_vs_rest") or {}, r.get("judge_vs_rest") or {}
        table_rows.append(
            [
                str(r.get("human")),
                fmt_num(h.get("estimate")),
                fmt_interval(h.get("lower"), h.get("upper")),
                fmt_num(j.get("estimate")),
                fmt_interval(j.get("lower"), j.get("upper")),
            ]
        )
    table_rows.append(
        ["mean", fmt_num(ceiling.get("mean_human")), "", fmt_num(ceiling.get("mean_judge")), ""]
    )
    section.blocks.append(
        Table(
            ["left-out human", "human vs the rest", "interval", "judge vs the rest", "interval"],
            table_rows,
            "lrrrr",
            caption=(
                f"{metric}: each human against the {ceiling.get('aggregate', 'aggregate')} of the "
                "other humans, and the judge against the same aggregate. The mean of the first "
                "column is the human ceiling."
            ),
        )
    )
    if rows:
        series = {
            "human vs the other humans": tuple(
                [(r.get("human_vs_rest") or {}).get(k) for r in rows]
                for k in ("estimate", "lower", "upper")
            ),
            "judge vs the same humans": tuple(
                [(r.get("judge_vs_rest") or {}).get(k) for r in rows]
                for k in ("estimate", "lower", "upper")
            ),
        }
        section.blocks.append(
            Figure(
                f"{slugify(key)}-ceiling",
                grouped_forest_plot(
                    [f"without {r.get('human')}" for r in rows],
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


def _judge_blocks(dim: str, j: Mapping[str, Any]) -> list[Section]:
    name = str(j.get("judge"))
    vs = j.get("vs_humans") or {}
    sec = Section(f"{name} vs humans")
    sec.blocks.append(
        metrics_table(
            vs.get("metrics") or {},
            caption=f"{name} against the humans' per-item {vs.get('y', 'aggregate')}; "
            f"n = {vs.get('n')} items in {vs.get('n_clusters')} clusters.",
        )
    )
    alpha = j.get("alpha")
    if alpha:
        sec.blocks.append(
            metrics_table(
                {
                    "α humans only": alpha.get("humans_only"),
                    "α with the judge as one more coder": alpha.get("with_judge"),
                    "difference": alpha.get("difference"),
                },
                caption=f"Krippendorff's α ({alpha.get('level')}).",
            )
        )
    alt = j.get("alt_test")
    if alt:
        verdict = "passed" if alt.get("passed") else "not passed"
        sec.blocks.append(
            KeyValues(
                [
                    ("alternative annotator test", verdict),
                    ("winning rate ω", fmt_pct(alt.get("winning_rate"))),
                    ("ε", fmt_num(alt.get("epsilon"), 2)),
                    ("alignment", str(alt.get("alignment"))),
                ]
            )
        )
        for w in alt.get("warnings") or []:
            sec.blocks.append(Note(str(w), "warning"))
    out = [sec]
    if j.get("ceiling"):
        out.append(_ceiling_section(name, j["ceiling"], f"calibration-{dim}-{name}"))
    return out


def calibration_report_sections(
    report: Any, *, figures: Mapping[str, Mapping[str, Any]] | None = None
) -> list[Section]:
    """One section per dimension of a ``CalibrationReport``.

    Parameters
    ----------
    report
        ``CalibrationReport`` or its dump (``dimensions``: DimensionReport dicts).
    figures
        Optional ``dimension -> {"agreement_matrix", "confusion", "calibration_curve"}`` (from
        :func:`calibration_figure_data`) drawn in the dimension's section.
    """
    data = _dump(report)
    out = []
    for d in data.get("dimensions") or []:
        dim = str(d.get("dimension"))
        join = d.get("join") or {}
        h_alpha = d.get("human_alpha") or {}
        sec = Section(f"Dimension: {dim}")
        sec.blocks.append(
            KeyValues(
                [
                    ("humans", f"{len(d.get('humans') or [])}: {', '.join(d.get('humans') or [])}"),
                    ("judge dimension", str(d.get("judge_dimension", dim))),
                    ("level of measurement", str(d.get("level"))),
                    ("humans aggregated by", str(d.get("aggregate"))),
                    ("items matched", fmt_int(join.get("matched"))),
                    (
                        "only human / only judge",
                        f"{join.get('left_only')} / {join.get('right_only')}",
                    ),
                    (
                        "α among humans",
                        f"{fmt_num(h_alpha.get('estimate'))} "
                        f"{fmt_interval(h_alpha.get('lower'), h_alpha.get('upper'))}",
                    ),
                    *(
                        (
                            label,
                            f"{fmt_num(m.get('estimate'))} "
                            f"{fmt_interval(m.get('lower'), m.get('upper'))}",
                        )
                        for label, m in (
                            ("Fleiss' κ among humans", d.get("fleiss_humans")),
                            ("Fleiss' κ, humans and judge", d.get("fleiss_with_judges")),
                        )
                        if m
                    ),
                ]
            )
        )
        for flag in d.get("flags") or []:
            sec.blocks.append(Note(str(flag), "warning"))
        for j in d.get("judges") or []:
            sec.subsections.extend(_judge_blocks(dim, j))
        fig = dict((figures or {}).get(dim) or {})
        am = fig.get("agreement_matrix")
        ceilings = [j["ceiling"] for j in d.get("judges") or [] if j.get("ceiling")]
        if am and am.get("ceiling") is None and ceilings:
            # the leave-one-out human ceiling of the same metric, when the report has it
            same = [c for c in ceilings if c.get("metric") == am.get("metric")]
            if same and same[0].get("mean_human") is not None:
                fig["agreement_matrix"] = {**am, "ceiling": same[0]["mean_human"]}
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
) -> dict[str, dict[str, Any]]:
    """Plain figure data per dimension from ``Rating`` records (humans and a judge).

    Returns ``dimension -> {"agreement_matrix", "confusion", "calibration_curve"}``: the rater ×
    rater matrix of ``metric`` (point estimates; judges listed in ``judges``), and — when both
    sides use at most :data:`MAX_CATEGORIES` values — the confusion counts of judge vs the
    humans' per-item ``how`` aggregate and the mean human aggregate at each judge value.
    Dimensions are matched by name (or the only one on each side).
    """
    from attune_judge.calibration import aggregate_raters, pairwise_matrix, ratings_to_table

    hdims = sorted({r.dimension for r in human})
    jdims = sorted({r.dimension for r in judge})
    pairs = [(d, d) for d in hdims if d in jdims]
    if not pairs and len(hdims) == 1 and len(jdims) == 1:
        pairs = [(hdims[0], jdims[0])]
    out: dict[str, dict[str, Any]] = {}
    for hdim, jdim in pairs:
        ht, jt = ratings_to_table(human, hdim), ratings_to_table(judge, jdim)
        jrows = {it: jt.values[i] for i, it in enumerate(jt.items)}
        items = [it for it in ht.items if it in jrows]
        hidx = {it: i for i, it in enumerate(ht.items)}
        from attune_judge.calibration import RatingTable

        table = RatingTable(
            items,
            ht.raters + jt.raters,
            [ht.values[hidx[it]] + jrows[it] for it in items],
            [ht.clusters[hidx[it]] for it in items],
            hdim,
        )
        entry: dict[str, Any] = {}
        if len(table.raters) >= 2 and items:
            pm = pairwise_matrix(table, metric, B=1)
            entry["agreement_matrix"] = {
                "raters": pm.raters,
                "matrix": pm.estimate,
                "metric": metric,
                "judges": list(jt.raters),
            }
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
                labels = [_label(v) for v in keys]
                counts = Counter((keys.index(a), keys.index(b)) for a, b in pairs_v)
                entry["confusion"] = {
                    "categories": labels,
                    "counts": [
                        [counts[(r, c)] for c in range(len(keys))] for r in range(len(keys))
                    ],
                    "human_label": f"humans ({agg_how})",
                    "judge_label": j,
                }
            if pairs_v and _numeric([b for _, b in pairs_v]) and _numeric([a for a, _ in pairs_v]):
                by: dict[float, list[float]] = defaultdict(list)
                for a, b in pairs_v:
                    by[float(b)].append(float(a))
                if len(by) <= MAX_CATEGORIES * 2:
                    xs = sorted(by)
                    humans_seen = [float(a) for a, _ in pairs_v]
                    entry["calibration_curve"] = {
                        "judge_scores": xs,
                        "human_means": [sum(by[x]) / len(by[x]) for x in xs],
                        "counts": [len(by[x]) for x in xs],
                        # same scale when the judge's values lie inside the humans' range
                        "identity": min(humans_seen) <= xs[0] and xs[-1] <= max(humans_seen),
                    }
            break  # one judge per dimension in the figures (the first)
        out[hdim] = entry
    return out
