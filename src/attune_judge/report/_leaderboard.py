"""The leaderboard section: table with intervals and rank sets, forest plot, rank-set plot.

Input is the one typed leaderboard the run records store: a calibration ``Leaderboard`` (a
scoring judge's) or a :class:`~attune_judge.runs.BenchLeaderboard` (a bench task's; also a
sensitivity variant's or a judge's means without a leaderboard, read into one): ``rows`` of
``model``, ``score`` (a ``Metric``), ``rank``, ``rank_set_simultaneous`` /
``rank_set_marginal`` and ``p_rank_1``, with the board's ``warnings`` and ``rank_claims``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import Leaderboard
from attune_judge.report._blocks import Figure, Note, Paragraph, Section, Table, slugify
from attune_judge.report._fig_scores import forest_plot, grouped_forest_plot, rank_set_plot
from attune_judge.report._format import (
    MISSING,
    fmt_int,
    fmt_interval,
    fmt_num,
    fmt_pct,
    fmt_rank_set,
)
from attune_judge.runs import BenchLeaderboard

__all__ = [
    "Board",
    "LeaderboardEntry",
    "comparison_section",
    "leaderboard_entries",
    "leaderboard_section",
]

Board = Leaderboard | BenchLeaderboard
"""The leaderboard shapes the run records store (one row layout)."""


@dataclass(frozen=True)
class LeaderboardEntry:
    """One model's line."""

    model: str
    mean: float | None
    lower: float | None = None
    upper: float | None = None
    n: int | None = None
    n_clusters: int | None = None
    rank: int | None = None
    rank_lower: int | None = None
    rank_upper: int | None = None
    marginal_lower: int | None = None
    marginal_upper: int | None = None
    p_rank_1: float | None = None
    no_rank_claim: str | None = None
    """Why the model makes no rank claim (no valid interval, as
    :func:`~attune_judge.calibration.no_claim_reason` says); no rank, rank set or P(rank 1)
    is shown for it."""


def leaderboard_entries(board: Board) -> list[LeaderboardEntry]:
    """The board's rows, best first: by the given rank (a metric may be lower-is-better),
    models without a score (no rank) last."""
    entries = []
    for r in board.rows:
        lo, hi = r.rank_set_simultaneous or (None, None)
        mlo, mhi = r.rank_set_marginal or (None, None)
        entries.append(
            LeaderboardEntry(
                model=r.model,
                mean=r.score.estimate,
                lower=r.score.lower,
                upper=r.score.upper,
                n=r.score.n,
                n_clusters=r.score.n_clusters,
                rank=r.rank,
                rank_lower=lo,
                rank_upper=hi,
                marginal_lower=mlo,
                marginal_upper=mhi,
                p_rank_1=r.p_rank_1,
                no_rank_claim=getattr(r, "no_rank_claim", None),
            )
        )
    claims = getattr(board, "rank_claims", True)
    entries.sort(
        key=lambda e: (
            e.rank is None,
            claims and e.no_rank_claim is not None,
            e.rank or 0,
            e.model,
        )
    )
    return entries


def _fits(entries: list[LeaderboardEntry], xlim: tuple[float, float] | None) -> bool:
    """Whether every estimate and interval end lies inside ``xlim`` (else: fit the data)."""
    if xlim is None:
        return False
    values = [v for e in entries for v in (e.mean, e.lower, e.upper) if v is not None]
    return all(xlim[0] <= v <= xlim[1] for v in values)


def _top_tier_sentence(entries: list[LeaderboardEntry], pct: str) -> str:
    """Which models may be best, read off the simultaneous rank sets."""
    top = [e.model for e in entries if e.rank_lower == 1 and e.no_rank_claim is None]
    if len(top) == 1:
        return f"{top[0]} ranks first, and the data pin that down at {pct} confidence."
    if top:
        return (
            f"{len(top)} models may rank first at {pct} confidence: {', '.join(top)}; the data "
            "do not separate them."
        )
    return "No rank set contains rank 1."


def leaderboard_section(
    board: Board,
    *,
    title: str = "Leaderboard",
    key: str = "leaderboard",
    score_label: str = "score (0–1)",
    level: float = DEFAULT_LEVEL,
    interval_note: str | None = None,
    xlim: tuple[float, float] | None = (-0.03, 1.03),
) -> Section:
    """A leaderboard table, a forest plot and (when rank sets exist) a rank-set plot.

    Parameters
    ----------
    board
        The leaderboard (module docstring).
    title
        Section heading.
    key
        Prefix of the figure file names (unique per report, e.g. the judge id).
    score_label
        What the score is (column header and x-axis label).
    level
        Confidence level of intervals and rank sets (for the labels).
    interval_note
        How the intervals were computed (printed under the table).
    xlim
        Axis range of the forest plot (``None`` = fit the data).
    """
    entries = leaderboard_entries(board)
    pct = f"{level * 100:g}%"
    section = Section(title)
    section.blocks.extend(Note(w, "warning") for w in board.warnings)
    claims = board.rank_claims
    if not any(e.mean is not None for e in entries):
        section.blocks.append(
            Note(
                "No model has a score on the normalised 0–1 scale (a judge without one, such as "
                "a length baseline, or no ok judgment); see the criterion scores and failures."
            )
        )
        return section
    has_ranks = claims and any(e.rank_lower is not None for e in entries)
    has_marginal = claims and any(e.marginal_lower is not None for e in entries)
    has_p1 = any(e.p_rank_1 is not None for e in entries)
    cols = ["rank", "model", score_label, f"{pct} interval", "n", "conversations"]
    align = "rlrrrr"
    if has_ranks:
        cols.append("rank set (simultaneous)")
        align += "c"
    if has_marginal:
        cols.append("rank set (marginal)")
        align += "c"
    if has_p1:
        cols.append("P(rank 1)")
        align += "r"
    rows = []
    for e in entries:
        # the one rule for claims: a row without one shows no rank, rank set or P(rank 1)
        # (below MIN_CLUSTERS that is every row, the board's warning says why once; the
        # point ranks still order the table)
        claim = claims and e.no_rank_claim is None
        row = [
            MISSING if e.rank is None or not claim else str(e.rank),
            e.model,
            fmt_num(e.mean),
            fmt_interval(e.lower, e.upper),
            fmt_int(e.n),
            fmt_int(e.n_clusters),
        ]
        if has_ranks:
            row.append(fmt_rank_set(e.rank_lower, e.rank_upper) if claim else MISSING)
        if has_marginal:
            row.append(fmt_rank_set(e.marginal_lower, e.marginal_upper) if claim else MISSING)
        if has_p1:
            row.append(fmt_pct(e.p_rank_1) if claim else MISSING)
        rows.append(row)
    caption = interval_note or f"{pct} intervals; best model first."
    if has_ranks:
        caption += (
            f" A rank set is the range of ranks a model can hold at {pct} confidence "
            "(simultaneous: all sets hold jointly); models whose sets overlap are not "
            "distinguishable."
        )
    if has_ranks and len(entries) > 1:
        section.blocks.append(Paragraph(_top_tier_sentence(entries, pct)))
    unranked = [e for e in entries if e.no_rank_claim is not None]
    if unranked and claims:
        section.blocks.append(
            Note(
                "No rank claim (comparable to every model: no rank, rank set or P(rank 1)): "
                + "; ".join(f"{e.model} ({e.no_rank_claim})" for e in unranked),
                "warning",
            )
        )
    section.blocks.append(Table(cols, rows, align, caption=caption))
    labels = [e.model for e in entries]
    xlim = xlim if _fits(entries, xlim) else None
    section.blocks.append(
        Figure(
            f"{slugify(key)}-forest",
            forest_plot(
                labels,
                [e.mean for e in entries],
                [e.lower for e in entries],
                [e.upper for e in entries],
                title=f"{title}: {score_label} with {pct} intervals",
                xlabel=score_label,
                xlim=xlim,
            ),
            alt=f"Forest plot of {len(entries)} model scores with {pct} intervals.",
            caption="Each row is a model; the diamond is its mean score, the bar its interval.",
        )
    )
    if has_ranks:
        section.blocks.append(
            Figure(
                f"{slugify(key)}-ranksets",
                rank_set_plot(
                    labels,
                    [e.rank_lower for e in entries],
                    [e.rank_upper for e in entries],
                    point_ranks=[e.rank if e.no_rank_claim is None else None for e in entries],
                    title=f"{title}: {pct} simultaneous confidence sets for ranks",
                ),
                alt=f"Confidence sets for the ranks of {len(entries)} models.",
                caption=(
                    "Each bar spans the ranks a model can hold; a bar covering a single "
                    "position is a rank the data pin down."
                ),
            )
        )
    elif len(entries) > 1 and not claims:
        section.blocks.append(
            Note(
                "No confidence sets for ranks: too few conversations for any claim about the "
                "order of the models."
            )
        )
    elif len(entries) > 1:
        section.blocks.append(Note("No confidence sets for ranks were computed for this run."))
    return section


def comparison_section(
    boards: Mapping[str, Board],
    *,
    title: str = "Scores by variant",
    key: str = "comparison",
    group_label: str = "variant",
    score_label: str = "score (0–1)",
    level: float = DEFAULT_LEVEL,
    xlim: tuple[float, float] | None = (-0.03, 1.03),
    caption: str | None = None,
) -> Section:
    """Several leaderboards of the same models (variants, judges) in one table and one figure.

    Parameters
    ----------
    boards
        ``group -> leaderboard``, in display order; models are ordered by the first group's ranking.
    """
    pct = f"{level * 100:g}%"
    entries = {g: leaderboard_entries(b) for g, b in boards.items()}
    section = Section(title)
    models: list[str] = []
    for es in entries.values():
        models += [e.model for e in es if e.model not in models]
    rows = []
    for g, es in entries.items():
        for e in es:
            claim = boards[g].rank_claims and e.no_rank_claim is None
            rows.append(
                [
                    g,
                    MISSING if e.rank is None or not claim else str(e.rank),
                    e.model,
                    fmt_num(e.mean),
                    fmt_interval(e.lower, e.upper),
                    fmt_rank_set(e.rank_lower, e.rank_upper) if claim else MISSING,
                ]
            )
    unranked = [
        f"{g}: {e.model} ({e.no_rank_claim})"
        for g, es in entries.items()
        for e in es
        if e.no_rank_claim
    ]
    if unranked:
        section.blocks.append(Note(f"No rank claim (no rank or rank set): {'; '.join(unranked)}"))
    section.blocks.append(
        Table(
            [group_label, "rank", "model", score_label, f"{pct} interval", "rank set"],
            rows,
            "lrlrrc",
            caption=caption,
        )
    )
    if xlim is not None and not _fits([e for es in entries.values() for e in es], xlim):
        xlim = None
    if models and entries:
        series = {}
        for g, es in entries.items():
            by = {e.model: e for e in es}
            series[g] = (
                [by[m].mean if m in by else None for m in models],
                [by[m].lower if m in by else None for m in models],
                [by[m].upper if m in by else None for m in models],
            )
        section.blocks.append(
            Figure(
                f"{slugify(key)}-grouped",
                grouped_forest_plot(models, series, title=title, xlabel=score_label, xlim=xlim),
                alt=f"Scores of {len(models)} models under {len(series)} {group_label}s.",
                caption=(
                    f"One row per model; one colour and marker per {group_label}; bars are "
                    f"{pct} intervals."
                ),
            )
        )
    return section
