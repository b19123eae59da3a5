"""Report section of a ranking with style under control (``summary.json`` key ``controlled``):
the controlled and raw rankings side by side (table and a slope chart of the ranks) and the
fitted style coefficients."""

from __future__ import annotations

from collections.abc import Sequence

from attune_judge.calibration import Metric
from attune_judge.report._blocks import Figure, Note, Section, Table
from attune_judge.report._fig_scores import rank_slope_plot
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData
from attune_judge.runs import ControlledSummary

__all__ = ["controlled_sections"]


def _cell(m: Metric, digits: int = 3) -> str:
    if m.estimate is None:
        return "—"
    return f"{fmt_num(m.estimate, digits)} {fmt_interval(m.lower, m.upper, digits)}".strip()


def _ranks(values: Sequence[float | None]) -> list[int]:
    keys = [float("-inf") if v is None else v for v in values]
    order = sorted(range(len(keys)), key=lambda i: -keys[i])
    out = [0] * len(keys)
    for r, i in enumerate(order, 1):
        out[i] = r
    return out


def controlled_sections(run: RunData) -> list[Section]:
    """The controlled ranking beside the raw one, the rank slope chart, the style terms."""
    if not isinstance(run.record, ControlledSummary):
        return []
    block = run.record.controlled
    section = Section("Ranking with style under control", anchor="controlled")
    if block.winrates is not None:
        res = block.winrates
        labels, ctrl, raw, digits = res.labels, res.controlled, res.raw, 1
        what, unit = f"win rate against {res.baseline} (%)", "AlpacaEval 2's GLM"
        sets, warnings = res.rank_sets_controlled, res.warnings
        terms = [("pooled length slope (logit per tanh(Δ/sd))", fmt_num(res.pooled_length_slope))]
    elif block.style is not None:
        st = block.style
        raw_by = dict(zip(st.raw.labels, st.raw.strengths, strict=True))
        labels, ctrl, digits = st.labels, st.strengths, 3
        raw = [raw_by[m] for m in labels]
        what, unit = "Bradley–Terry strength β", "Bradley–Terry with style covariates"
        sets, warnings = st.rank_sets_simultaneous, st.warnings
        terms = [
            (f"{name} (γ per sd of the normalised difference)", _cell(m))
            for name, m in zip(st.covariates, st.style, strict=True)
        ]
    elif block.means is not None:
        mn = block.means
        labels, ctrl, raw, digits = mn.labels, mn.controlled, mn.raw, 3
        what, unit = "mean score", f"scores on model and length ({mn.reference})"
        sets, warnings = mn.rank_sets_controlled, mn.warnings
        terms = [("length slope (score per 100 characters)", _cell(mn.length_slope))]
    else:
        return []
    section.blocks.extend(Note(w, "warning") for w in warnings)
    rc = _ranks([m.estimate for m in ctrl])
    rr = _ranks([m.estimate for m in raw])
    order = sorted(range(len(labels)), key=lambda i: rc[i])
    section.blocks.append(
        Table(
            ["rank", "model", f"controlled {what}", "rank set", f"raw {what}", "raw rank"],
            [
                [
                    str(rc[i]),
                    labels[i],
                    _cell(ctrl[i], digits),
                    f"{sets.lower[i]}–{sets.upper[i]}",
                    _cell(raw[i], digits),
                    str(rr[i]),
                ]
                for i in order
            ],
            "rlrrrr",
            caption=(
                f"{unit}; the controlled value is what the judge gives at equal length "
                "(and formatting). A model that is better because it is longer loses that "
                "credit too."
            ),
        )
    )
    section.blocks.append(
        Figure(
            "controlled-rank-slope",
            rank_slope_plot(labels, rr, rc),
            alt=f"Raw and controlled ranks of {len(labels)} models, joined by lines.",
            caption="Left: rank by the raw values; right: rank once style is controlled.",
        )
    )
    section.blocks.append(Table(["style term", "estimate"], [list(t) for t in terms], "lr"))
    return [section]
