"""Report section of a prediction-powered leaderboard (``summary.json`` key ``ppi``).

The summary holds a :class:`attune_judge.runs.PpiBlock` (the ``PPILeaderboard`` with the
join of the human labels); the section shows the three estimates per model side by side
(table and figure) and the pairwise differences.
"""

from __future__ import annotations

from attune_judge.calibration import PPIEstimate
from attune_judge.report._blocks import Figure, KeyValues, Note, Section, Table
from attune_judge.report._fig_scores import grouped_forest_plot
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData
from attune_judge.runs import PpiSummary

__all__ = ["ppi_sections"]

_KINDS = (("ppi", "PPI++ (corrected)"), ("human_only", "human only"), ("judge_only", "judge only"))


def _cell(e: PPIEstimate) -> str:
    if e.estimate is None:
        return "—"
    return f"{fmt_num(e.estimate)} {fmt_interval(e.lower, e.upper)}".strip()


def _gain(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def ppi_sections(run: RunData) -> list[Section]:
    """The prediction-powered leaderboard section (table, figure, differences)."""
    if not isinstance(run.record, PpiSummary):
        return []
    board = run.record.ppi
    rows, level = board.rows, board.level
    section = Section("Prediction-powered leaderboard", anchor="ppi")
    section.blocks.extend(Note(w, "warning") for w in board.warnings)
    if run.record.label_weighting:
        section.blocks.append(Note(run.record.label_weighting))
    section.blocks.append(
        KeyValues(
            [
                ("human dimension", board.dimension),
                ("human-labelled items", str(board.n_human_items)),
                ("of which the judge scored", str(board.n_matched)),
                ("clusters", str(board.n_clusters)),
                ("method", board.method),
            ]
        )
    )
    unranked = "; ".join(f"{r.model} ({r.no_rank_claim})" for r in rows if r.no_rank_claim)
    if unranked and board.rank_claims:  # (below 10 conversations the warning says so once)
        section.blocks.append(Note(f"No rank claim (comparable to every model): {unranked}"))
    section.blocks.append(
        Table(
            ["rank", "model", "PPI++", "judge only", "human only", "λ", "labelled", "ESS gain"],
            [
                [
                    "—" if r.no_rank_claim else str(r.rank),
                    r.model,
                    _cell(r.ppi),
                    _cell(r.judge_only),
                    _cell(r.human_only),
                    fmt_num(r.lam, 2),
                    f"{r.n_labelled} / {r.n_labelled + r.n_unlabelled}",
                    _gain(r.ess_gain),
                ]
                for r in rows
            ],
            "rlrrrrrr",
            caption=(
                f"{level:.0%} intervals. PPI++ = human-only mean corrected with the judge's scores "
                "(unbiased for the mean human value); judge only is on the judge's scale and keeps "
                "its bias; ESS gain = how many times more human labels the human-only mean would "
                "need for the same precision."
            ),
        )
    )
    if rows:
        series = {
            label: tuple(
                [getattr(getattr(r, key), k) for r in rows] for k in ("estimate", "lower", "upper")
            )
            for key, label in _KINDS
        }
        section.blocks.append(
            Figure(
                "ppi-leaderboard",
                grouped_forest_plot(
                    [r.model for r in rows],
                    series,  # type: ignore[arg-type]
                    title=f"Model means, three ways ({level:.0%} intervals)",
                    xlabel="mean score",
                ),
                "Per-model means: PPI++, human only and judge only, with intervals",
            )
        )
    if board.differences:
        section.blocks.append(
            Table(
                ["difference", "PPI++", "judge only", "human only", "ESS gain", "distinguishable"],
                [
                    [
                        f"{d.model_a} − {d.model_b}",
                        _cell(d.ppi),
                        _cell(d.judge_only),
                        _cell(d.human_only),
                        _gain(d.ess_gain),
                        "yes" if d.distinguishable else "no",
                    ]
                    for d in board.differences
                ],
                "lrrrrl",
                caption="Pairwise differences, paired over conversations.",
            )
        )
    if board.note:
        section.blocks.append(Note(board.note))
    return [section]
