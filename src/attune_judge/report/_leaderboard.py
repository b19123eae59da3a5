"""The leaderboard section: table with intervals and rank sets, forest plot, rank-set plot.

Input is plain data in any of three shapes, normalised by :func:`leaderboard_entries`:

- a calibration ``Leaderboard`` (the result model or its ``model_dump()``): ``rows`` with
  ``model``, ``score`` (a Metric: ``estimate``, ``lower``, ``upper``, ``n``, ``n_clusters``),
  ``rank``, ``rank_set_simultaneous`` / ``rank_set_marginal`` (``[best, worst]``),
  ``p_rank_1``;
- the runner's per-model blocks, ``{model: {"score": {"mean", "lower", "upper", "n"}, ...}}``;
- flat rows, ``[{"model", "mean", "lower", "upper", "n", "rank_lower", "rank_upper"}, ...]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from attune_judge.report._blocks import Figure, Note, Paragraph, Section, Table, slugify
from attune_judge.report._fig_scores import forest_plot, grouped_forest_plot, rank_set_plot
from attune_judge.report._format import (
    MISSING,
    fmt_int,
    fmt_interval,
    fmt_num,
    fmt_pct,
    fmt_rank_set,
    to_float,
)

__all__ = [
    "LeaderboardEntry",
    "comparison_section",
    "leaderboard_entries",
    "leaderboard_section",
]


@dataclass(frozen=True)
class LeaderboardEntry:
    """One model's line, whatever shape it came in."""

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


def _dump(obj: Any) -> Any:
    return obj.model_dump() if hasattr(obj, "model_dump") else obj


def _pair(x: Any) -> tuple[int | None, int | None]:
    if isinstance(x, Sequence) and not isinstance(x, str) and len(x) == 2:
        return (None if x[0] is None else int(x[0]), None if x[1] is None else int(x[1]))
    return None, None


def _int(x: Any) -> int | None:
    v = to_float(x)
    return None if v is None else round(v)


def _from_calibration_row(r: Mapping[str, Any]) -> LeaderboardEntry:
    score = r.get("score") or {}
    lo, hi = _pair(r.get("rank_set_simultaneous"))
    mlo, mhi = _pair(r.get("rank_set_marginal"))
    return LeaderboardEntry(
        model=str(r["model"]),
        mean=to_float(score.get("estimate")),
        lower=to_float(score.get("lower")),
        upper=to_float(score.get("upper")),
        n=_int(r.get("n", score.get("n"))),
        n_clusters=_int(r.get("n_clusters", score.get("n_clusters"))),
        rank=_int(r.get("rank")),
        rank_lower=lo,
        rank_upper=hi,
        marginal_lower=mlo,
        marginal_upper=mhi,
        p_rank_1=to_float(r.get("p_rank_1")),
    )


def _from_flat_row(model: str, r: Mapping[str, Any]) -> LeaderboardEntry:
    score = r.get("score") if isinstance(r.get("score"), Mapping) else r
    assert isinstance(score, Mapping)
    mean = score.get("mean", score.get("estimate"))
    lo, hi = _pair(r.get("rank_set") or r.get("rank_set_simultaneous"))
    mlo, mhi = _pair(r.get("rank_set_marginal"))
    return LeaderboardEntry(
        model=model,
        mean=to_float(mean),
        lower=to_float(score.get("lower")),
        upper=to_float(score.get("upper")),
        n=_int(score.get("n", r.get("n_ok"))),
        n_clusters=_int(score.get("n_conversations", score.get("n_clusters"))),
        rank=_int(r.get("rank")),
        rank_lower=_int(r.get("rank_lower")) if lo is None else lo,
        rank_upper=_int(r.get("rank_upper")) if hi is None else hi,
        marginal_lower=mlo,
        marginal_upper=mhi,
        p_rank_1=to_float(r.get("p_rank_1")),
    )


def leaderboard_entries(data: Any) -> list[LeaderboardEntry]:
    """Normalise any supported leaderboard shape (see the module docstring), best first.

    Given ranks decide the order (a metric may be lower-is-better); without them the higher
    mean comes first and the point rank is filled in. Models without an estimate go last.
    """
    data = _dump(data)
    if isinstance(data, Mapping) and isinstance(data.get("rows"), list):
        entries = [_from_calibration_row(_dump(r)) for r in data["rows"]]
    elif isinstance(data, Mapping):
        entries = [_from_flat_row(str(m), _dump(r)) for m, r in data.items()]
    else:
        entries = [_from_flat_row(str(_dump(r)["model"]), _dump(r)) for r in data]
    if entries and all(e.rank is not None for e in entries):
        entries.sort(key=lambda e: (e.rank or 0, e.model))
        return entries
    entries.sort(key=lambda e: (e.mean is None, -(e.mean or 0.0), e.model))
    out = []
    for e in entries:
        if e.rank is None and e.mean is not None:
            better = sum(1 for o in entries if o.mean is not None and o.mean > e.mean)
            e = LeaderboardEntry(**{**e.__dict__, "rank": 1 + better})
        out.append(e)
    return out


def _fits(entries: list[LeaderboardEntry], xlim: tuple[float, float] | None) -> bool:
    """Whether every estimate and interval end lies inside ``xlim`` (else: fit the data)."""
    if xlim is None:
        return False
    values = [v for e in entries for v in (e.mean, e.lower, e.upper) if v is not None]
    return all(xlim[0] <= v <= xlim[1] for v in values)


def _top_tier_sentence(entries: list[LeaderboardEntry], pct: str) -> str:
    """Which models may be best, read off the simultaneous rank sets."""
    top = [e.model for e in entries if e.rank_lower == 1]
    if len(top) == 1:
        return f"{top[0]} ranks first, and the data pin that down at {pct} confidence."
    if top:
        return (
            f"{len(top)} models may rank first at {pct} confidence: {', '.join(top)}; the data "
            "do not separate them."
        )
    return "No rank set contains rank 1."


def leaderboard_section(
    data: Any,
    *,
    title: str = "Leaderboard",
    key: str = "leaderboard",
    score_label: str = "score (0–1)",
    level: float = 0.95,
    interval_note: str | None = None,
    xlim: tuple[float, float] | None = (-0.03, 1.03),
) -> Section:
    """A leaderboard table, a forest plot and (when rank sets exist) a rank-set plot.

    Parameters
    ----------
    data
        Leaderboard in one of the supported shapes (module docstring).
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
    entries = leaderboard_entries(data)
    pct = f"{level * 100:g}%"
    section = Section(title)
    dumped = _dump(data)
    meta = dumped if isinstance(dumped, Mapping) else {}
    for w in meta.get("warnings") or []:
        section.blocks.append(Note(str(w), "warning"))
    claims = meta.get("rank_claims", True) is not False
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
        row = [
            MISSING if e.rank is None else str(e.rank),
            e.model,
            fmt_num(e.mean),
            fmt_interval(e.lower, e.upper),
            fmt_int(e.n),
            fmt_int(e.n_clusters),
        ]
        if has_ranks:
            row.append(fmt_rank_set(e.rank_lower, e.rank_upper))
        if has_marginal:
            row.append(fmt_rank_set(e.marginal_lower, e.marginal_upper))
        if has_p1:
            row.append(fmt_pct(e.p_rank_1))
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
                    point_ranks=[e.rank for e in entries],
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
    boards: Mapping[str, Any],
    *,
    title: str = "Scores by variant",
    key: str = "comparison",
    group_label: str = "variant",
    score_label: str = "score (0–1)",
    level: float = 0.95,
    xlim: tuple[float, float] | None = (-0.03, 1.03),
    caption: str | None = None,
) -> Section:
    """Several leaderboards of the same models (variants, judges) in one table and one figure.

    Parameters
    ----------
    boards
        ``group -> leaderboard`` (any shape :func:`leaderboard_entries` reads), in display
        order; models are ordered by the first group's ranking.
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
            rows.append(
                [
                    g,
                    MISSING if e.rank is None else str(e.rank),
                    e.model,
                    fmt_num(e.mean),
                    fmt_interval(e.lower, e.upper),
                    fmt_rank_set(e.rank_lower, e.rank_upper),
                ]
            )
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
