"""Report section of a prediction-powered leaderboard (``summary.json`` key ``ppi``).

The summary holds ``PPILeaderboard.model_dump()`` plus ``dimension``, ``n_human_items`` and
``n_matched``; the section shows the three estimates per model side by side (table and figure)
and the pairwise differences.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attune_judge.report._blocks import Figure, KeyValues, Note, Section, Table
from attune_judge.report._fig_scores import grouped_forest_plot
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData

__all__ = ["ppi_sections"]

_KINDS = (("ppi", "PPI++ (corrected)"), ("human_only", "human only"), ("judge_only", "judge only"))


def _cell(e: Mapping[str, Any] | None) -> str:
    e = e or {}
    if e.get("estimate") is None:
        return "—"
    return f"{fmt_num(e.get('estimate'))} {fmt_interval(e.get('lower'), e.get('upper'))}".strip()


def _gain(value: Any) -> str:
    return "—" if value is None else f"{float(value):.2f}×"


def _total(row: Mapping[str, Any]) -> int:
    return int(row.get("n_labelled", 0)) + int(row.get("n_unlabelled", 0))


def ppi_sections(run: RunData) -> list[Section]:
    """The prediction-powered leaderboard section (table, figure, differences)."""
    board: Mapping[str, Any] = run.summary.get("ppi") or {}
    rows = list(board.get("rows") or [])
    level = float(board.get("level", 0.95))
    section = Section("Prediction-powered leaderboard", anchor="ppi")
    for w in board.get("warnings") or []:
        section.blocks.append(Note(str(w), "warning"))
    if run.summary.get("label_weighting"):
        section.blocks.append(Note(str(run.summary["label_weighting"])))
    section.blocks.append(
        KeyValues(
            [
                ("human dimension", str(board.get("dimension", "—"))),
                ("human-labelled items", str(board.get("n_human_items", "—"))),
                ("of which the judge scored", str(board.get("n_matched", "—"))),
                ("clusters", str(board.get("n_clusters", "—"))),
                ("method", str(board.get("method", "PPI++"))),
            ]
        )
    )
    section.blocks.append(
        Table(
            ["rank", "model", "PPI++", "judge only", "human only", "λ", "labelled", "ESS gain"],
            [
                [
                    str(r.get("rank")),
                    str(r.get("model")),
                    _cell(r.get("ppi")),
                    _cell(r.get("judge_only")),
                    _cell(r.get("human_only")),
                    fmt_num(r.get("lam"), 2),
                    f"{r.get('n_labelled')} / {_total(r)}",
                    _gain(r.get("ess_gain")),
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
                [(r.get(key) or {}).get(k) for r in rows] for k in ("estimate", "lower", "upper")
            )
            for key, label in _KINDS
        }
        section.blocks.append(
            Figure(
                "ppi-leaderboard",
                grouped_forest_plot(
                    [str(r.get("model")) for r in rows],
                    series,  # type: ignore[arg-type]
                    title=f"Model means, three ways ({level:.0%} intervals)",
                    xlabel="mean score",
                ),
                "Per-model means: PPI++, human only and judge only, with intervals",
            )
        )
    diffs = list(board.get("differences") or [])
    if diffs:
        section.blocks.append(
            Table(
                ["difference", "PPI++", "judge only", "human only", "ESS gain", "distinguishable"],
                [
                    [
                        f"{d.get('model_a')} − {d.get('model_b')}",
                        _cell(d.get("ppi")),
                        _cell(d.get("judge_only")),
                        _cell(d.get("human_only")),
                        _gain(d.get("ess_gain")),
                        "yes" if d.get("distinguishable") else "no",
                    ]
                    for d in diffs
                ],
                "lrrrrl",
                caption="Pairwise differences, paired over conversations.",
            )
        )
    if board.get("note"):
        section.blocks.append(Note(str(board["note"])))
    return [section]
