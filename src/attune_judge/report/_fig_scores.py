"""Figures of scores and rankings: forest plot, rank-set plot, judgment status bars.

Every function takes plain sequences (so it can be tested with hand-made numbers) and returns
PNG bytes. Missing values are ``None`` (or NaN) and are drawn as an explicit "undefined" mark,
never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.report._format import fmt_interval, fmt_num, to_float
from attune_judge.report._style import (
    OKABE_ITO,
    STATUS_COLOURS,
    height_for,
    label_width,
    new_figure,
    set_title,
    styled,
    to_png,
)

__all__ = ["forest_plot", "grouped_forest_plot", "rank_set_plot", "rank_slope_plot", "status_plot"]

Num = float | int | None


def _check_lengths(name: str, n: int, **cols: Sequence[Any] | None) -> None:
    for key, col in cols.items():
        if col is not None and len(col) != n:
            raise ValueError(f"{name}: {key} has {len(col)} values, expected {n}")


@styled
def forest_plot(
    labels: Sequence[str],
    estimates: Sequence[Num],
    lower: Sequence[Num],
    upper: Sequence[Num],
    *,
    title: str = "Model scores with 95% confidence intervals",
    xlabel: str = "mean normalised score (0 = worst, 1 = best)",
    reference: float | None = None,
    reference_label: str | None = None,
    xlim: tuple[float, float] | None = None,
) -> bytes:
    """Point estimates with horizontal interval bars, one row per label (first label on top).

    Parameters
    ----------
    labels, estimates, lower, upper
        Equally long; ``None`` marks a missing estimate or interval end.
    title, xlabel
        Axis texts (the reader should not need a legend).
    reference, reference_label
        An optional vertical line (chance level, base score) and its label.
    xlim
        Axis limits; default fits the data.

    Returns
    -------
    bytes
        PNG image.
    """
    n = len(labels)
    _check_lengths("forest_plot", n, estimates=estimates, lower=lower, upper=upper)
    # room for the labels, at least 3.2 in of plot and 1.6 in for the numbers on the right
    width = max(7.0, label_width(labels) + 3.2 + 1.6)
    fig, ax = new_figure(width, height_for(n))
    ys = list(range(n))[::-1]
    colour = OKABE_ITO["blue"]
    for y, est, lo, hi in zip(ys, estimates, lower, upper, strict=True):
        e, a, b = to_float(est), to_float(lo), to_float(hi)
        if a is not None and b is not None:
            ax.hlines(y, a, b, color=colour, linewidth=2.2)
            ax.vlines([a, b], y - 0.15, y + 0.15, color=colour, linewidth=1.2)
        if e is not None:
            ax.plot([e], [y], marker="D", color=OKABE_ITO["vermillion"], markersize=6, zorder=3)
    ax.set_yticks(ys, [str(x) for x in labels])
    ax.set_ylim(-0.7, n - 0.3)
    if xlim is not None:
        ax.set_xlim(*xlim)
    if reference is not None:
        ax.axvline(reference, color=OKABE_ITO["black"], linestyle=":", linewidth=1)
        if reference_label:
            ax.annotate(
                reference_label,
                (reference, n - 0.4),
                xytext=(3, 0),
                textcoords="offset points",
                fontsize=8,
                va="top",
            )
    # the numbers, right of the plot area: no need to read values off the axis
    for y, est, lo, hi in zip(ys, estimates, lower, upper, strict=True):
        text = fmt_num(est) if to_float(est) is not None else "undefined"
        if to_float(lo) is not None and to_float(hi) is not None:
            text += " " + fmt_interval(lo, hi)
        ax.annotate(
            text,
            (1.0, y),
            xycoords=("axes fraction", "data"),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_xlabel(xlabel)
    set_title(
        ax, title, ["diamond = estimate, bar = interval"], width_in=width - label_width(labels)
    )
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    return to_png(fig)


@styled
def rank_set_plot(
    labels: Sequence[str],
    lower: Sequence[int | None],
    upper: Sequence[int | None],
    *,
    point_ranks: Sequence[int | None] | None = None,
    title: str = "95% confidence sets for ranks",
    xlabel: str = "rank (1 = best)",
) -> bytes:
    """Each label's confidence set for its rank as a horizontal bar over rank positions.

    Parameters
    ----------
    labels, lower, upper
        Equally long; ``lower``/``upper`` are the best/worst rank in the set (1 = best).
    point_ranks
        Optional rank of the point estimate, drawn as a dot.
    title, xlabel
        Axis texts.

    Returns
    -------
    bytes
        PNG image.
    """
    n = len(labels)
    _check_lengths("rank_set_plot", n, lower=lower, upper=upper, point_ranks=point_ranks)
    known = [int(v) for v in [*lower, *upper] if v is not None]
    p = max([n, *known]) if known or n else 1
    fig, ax = new_figure(max(7.0, label_width(labels) + 4.5), height_for(n))
    ys = list(range(n))[::-1]
    for i, (y, lo, hi) in enumerate(zip(ys, lower, upper, strict=True)):
        if lo is None or hi is None:
            ax.annotate("no rank set", (0.5, y), va="center", fontsize=8, color="#555555")
            continue
        ax.barh(
            y,
            int(hi) - int(lo) + 0.8,
            left=int(lo) - 0.4,
            height=0.55,
            color=OKABE_ITO["sky_blue"],
            edgecolor=OKABE_ITO["blue"],
        )
        text = str(lo) if lo == hi else f"{lo}–{hi}"
        ax.annotate(
            text,
            (int(hi) + 0.45, y),
            va="center",
            fontsize=8,
        )
        if point_ranks is not None and point_ranks[i] is not None:
            ax.plot([point_ranks[i]], [y], "o", color=OKABE_ITO["black"], markersize=4)
    ax.set_yticks(ys, [str(x) for x in labels])
    ax.set_xticks(range(1, p + 1))
    ax.set_xlim(0.4, p + 1.0)
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(xlabel)
    sub = "bar = ranks the model can hold" + (", dot = rank of the estimate" if point_ranks else "")
    set_title(ax, title, [sub])
    return to_png(fig)


@styled
def status_plot(
    models: Sequence[str],
    counts: Mapping[str, Sequence[int]],
    *,
    title: str = "Judgments by status",
    xlabel: str = "number of judgments",
) -> bytes:
    """Stacked horizontal bars: per model, how many judgments ended in each status.

    Parameters
    ----------
    models
        Row labels (first on top).
    counts
        ``status -> counts per model`` (same order as ``models``); statuses are stacked in the
        mapping's order, each in a fixed colour, keyed by a one-line legend under the plot;
        every segment is labelled with its count.

    Returns
    -------
    bytes
        PNG image.
    """
    n = len(models)
    for status, col in counts.items():
        _check_lengths("status_plot", n, **{status: col})
    fig, ax = new_figure(7.0, height_for(n, base=1.8))
    ys = list(range(n))[::-1]
    left = [0.0] * n
    for status, col in counts.items():
        vals = [float(v) for v in col]
        colour = STATUS_COLOURS.get(status, OKABE_ITO["yellow"])
        ax.barh(ys, vals, left=left, height=0.6, color=colour, label=status)
        for y, lft, v in zip(ys, left, vals, strict=True):
            if v > 0:
                ax.annotate(
                    f"{int(v)}",
                    (lft + v / 2, y),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="black",
                )
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax.set_yticks(ys, [str(m) for m in models])
    ax.set_xlabel(xlabel)
    # below the plot, in figure space: never clipped, whatever the width of the row labels
    fig.legend(loc="outside lower center", ncol=len(counts), fontsize=8, frameon=False)
    set_title(ax, title)
    return to_png(fig)


@styled
def grouped_forest_plot(
    labels: Sequence[str],
    groups: Mapping[str, tuple[Sequence[Num], Sequence[Num], Sequence[Num]]],
    *,
    title: str = "Scores by variant",
    xlabel: str = "mean normalised score (0 = worst, 1 = best)",
    xlim: tuple[float, float] | None = None,
) -> bytes:
    """Several estimates per label (one per group: variant, task, judge), side by side.

    Parameters
    ----------
    labels
        Row labels (models), first on top.
    groups
        ``group -> (estimates, lower, upper)``, each as long as ``labels``; a group gets one
        Okabe–Ito colour and marker, keyed by a legend above the plot.
    """
    n, k = len(labels), len(groups)
    for g, (est, lo, hi) in groups.items():
        _check_lengths(f"grouped_forest_plot[{g}]", n, estimates=est, lower=lo, upper=hi)
    fig, ax = new_figure(
        max(7.0, label_width(labels) + 4.5), height_for(n, per_row=0.22 * max(k, 2), base=1.9)
    )
    colours = [c for name, c in OKABE_ITO.items() if name not in ("black", "yellow")]
    markers = "oDs^vP*X"
    step = 0.7 / max(k, 1)
    for gi, (g, (est, lo, hi)) in enumerate(groups.items()):
        colour = colours[gi % len(colours)]
        off = 0.35 - step / 2 - gi * step
        for row, (e, a, b) in enumerate(zip(est, lo, hi, strict=True)):
            y = n - 1 - row + off
            a_, b_, e_ = to_float(a), to_float(b), to_float(e)
            if a_ is not None and b_ is not None:
                ax.hlines(y, a_, b_, color=colour, linewidth=1.8)
            if e_ is not None:
                ax.plot(
                    [e_],
                    [y],
                    marker=markers[gi % len(markers)],
                    color=colour,
                    markersize=5,
                    linestyle="none",
                    label=g if row == 0 else None,
                )
    ax.set_yticks(list(range(n))[::-1], [str(x) for x in labels])
    ax.set_ylim(-0.6, n - 0.4)
    for y in range(n - 1):
        ax.axhline(y + 0.5, color="#e5e5e5", linewidth=0.8)
    if xlim is not None:
        ax.set_xlim(*xlim)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", color="#eeeeee", linewidth=0.6)
    handles, names = ax.get_legend_handles_labels()
    ncol = min(k, 5)
    if handles:
        ax.legend(
            handles,
            names,
            loc="lower left",
            bbox_to_anchor=(0.0, 1.0),
            ncol=ncol,
            fontsize=8,
            frameon=False,
            borderaxespad=0.2,
        )
    ax.set_title(title, loc="left", pad=8 + 14 * ((k + ncol - 1) // max(ncol, 1)))
    return to_png(fig)


@styled
def rank_slope_plot(
    labels: Sequence[str],
    raw_ranks: Sequence[int],
    controlled_ranks: Sequence[int],
    *,
    title: str = "Raw and controlled ranks",
    left: str = "raw",
    right: str = "controlled",
) -> bytes:
    """Slope chart: each label's rank on the left (raw) joined to its rank on the right
    (controlled); labels that move are drawn in colour.

    Returns
    -------
    bytes
        PNG image.
    """
    n = len(labels)
    _check_lengths("rank_slope_plot", n, raw_ranks=raw_ranks, controlled_ranks=controlled_ranks)
    width = max(6.0, 2 * label_width(labels) + 3.0)
    fig, ax = new_figure(width, height_for(n))
    for name, a, b in zip(labels, raw_ranks, controlled_ranks, strict=True):
        moved = a != b
        colour = OKABE_ITO["vermillion"] if moved else OKABE_ITO["blue"]
        ax.plot([0, 1], [a, b], "-o", color=colour, linewidth=2.0 if moved else 1.2)
        ax.annotate(f"{name} ({a})", (-0.04, a), ha="right", va="center", fontsize=8)
        ax.annotate(f"({b}) {name}", (1.04, b), ha="left", va="center", fontsize=8)
    ax.set_xlim(-1.0, 2.0)
    ax.set_ylim(n + 0.6, 0.4)
    ax.set_xticks([0, 1], [left, right])
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    set_title(ax, title, ["rank 1 at the top; coloured lines change rank"])
    return to_png(fig)
