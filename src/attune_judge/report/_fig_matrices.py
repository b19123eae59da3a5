"""Matrix figures: agreement heatmap, confusion matrix, Kendall τ heatmap; and the calibration
plot (judge score against mean human score).

Every function takes plain sequences / nested lists (``None`` = undefined cell) and returns PNG
bytes. Cells are annotated with their values, so the colour bar is a guide, not the only key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attune_judge.report._format import fmt_num, to_float
from attune_judge.report._style import (
    DIVERGING_CMAP,
    OKABE_ITO,
    SEQUENTIAL_CMAP,
    new_figure,
    set_title,
    styled,
    to_png,
)

__all__ = [
    "agreement_heatmap",
    "calibration_plot",
    "confusion_matrix_plot",
    "tau_heatmap",
    "value_heatmap",
]

Matrix = Sequence[Sequence[float | int | None]]


def _as_grid(name: str, matrix: Matrix, n_rows: int, n_cols: int) -> list[list[float]]:
    """A list-of-lists of floats (NaN for undefined), checked against the label counts."""
    if len(matrix) != n_rows or any(len(r) != n_cols for r in matrix):
        raise ValueError(f"{name}: matrix must be {n_rows} × {n_cols}")
    return [[v if (v := to_float(x)) is not None else float("nan") for x in r] for r in matrix]


def _cell_label(ax: Any, i: int, j: int, text: str, light: bool) -> None:
    """A cell's label, black on a light cell and white on a dark one."""
    color = "black" if light else "white"
    ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)


def _annotate_cells(
    ax: Any, grid: list[list[float]], vmin: float, vmax: float, digits: int, cmap: str
) -> None:
    """Write each cell's value in a colour that contrasts with the cell colour."""
    import matplotlib

    cm = matplotlib.colormaps[cmap]
    span = (vmax - vmin) or 1.0
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v != v:  # NaN
                ax.text(j, i, "n/a", ha="center", va="center", fontsize=7, color="#555555")
                continue
            r, g, b, _ = cm(min(max((v - vmin) / span, 0.0), 1.0))
            light = 0.299 * r + 0.587 * g + 0.114 * b > 0.55
            _cell_label(ax, i, j, fmt_num(v, digits) if digits else f"{round(v)}", light)


def _heatmap(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    grid: list[list[float]],
    *,
    cmap: str = SEQUENTIAL_CMAP,
    vmin: float | None = None,
    vmax: float,
    digits: int = 2,
    colorbar_label: str,
) -> tuple[Any, Any, Any]:
    """The figure, axes and colour bar of a heatmap of ``grid``; ``vmin`` defaults to 0, or the
    smallest value when negative."""
    import numpy as np

    if vmin is None:
        vmin = min([0.0, *(v for r in grid for v in r if v == v)])
    n_r, n_c = len(row_labels), len(col_labels)
    fig, ax = new_figure(max(5.6, 2.2 + 0.7 * n_c), max(3.4, 1.7 + 0.5 * n_r))
    data = np.ma.masked_invalid(np.asarray(grid, dtype=float))
    im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(n_c), [str(c) for c in col_labels], rotation=30, ha="right")
    ax.set_yticks(range(n_r), [str(r) for r in row_labels])
    ax.spines[:].set_visible(False)
    _annotate_cells(ax, grid, vmin, vmax, digits, cmap)
    cbar = fig.colorbar(im, ax=ax, shrink=0.85)
    cbar.set_label(colorbar_label)
    return fig, ax, cbar


@styled
def agreement_heatmap(
    raters: Sequence[str],
    matrix: Matrix,
    *,
    metric: str = "Cohen's κ (quadratic)",
    highlight: Sequence[str] = (),
    ceiling: float | None = None,
    title: str = "Pairwise agreement between raters",
    vmin: float | None = None,
    vmax: float = 1.0,
) -> bytes:
    """Raters × raters agreement, with the judge's row and column outlined.

    Parameters
    ----------
    raters
        Row and column labels.
    matrix
        Square, ``None`` (or NaN) for undefined or unmeasured pairs (the diagonal, usually).
    metric
        Name of the statistic (colour bar label).
    highlight
        Raters to outline (the judge or judges); their tick labels are bold.
    ceiling
        The human ceiling, marked as a line on the colour bar and in the title.
    title, vmin, vmax
        Title and colour range; ``vmin`` defaults to 0, or the smallest value when negative.
    """
    n = len(raters)
    grid = _as_grid("agreement_heatmap", matrix, n, n)
    fig, ax, cbar = _heatmap(raters, raters, grid, vmin=vmin, vmax=vmax, colorbar_label=metric)
    from matplotlib.patches import Rectangle

    marked = [i for i, r in enumerate(raters) if r in set(highlight)]
    for i in marked:
        for rect in ((-0.5, i - 0.5, n, 1), (i - 0.5, -0.5, 1, n)):
            ax.add_patch(
                Rectangle(
                    rect[:2],
                    rect[2],
                    rect[3],
                    fill=False,
                    edgecolor=OKABE_ITO["vermillion"],
                    linewidth=2.2,
                )
            )
        ax.get_yticklabels()[i].set_fontweight("bold")
        ax.get_xticklabels()[i].set_fontweight("bold")
    sub = []
    if marked:
        sub.append("outlined = judge")
    c = to_float(ceiling)
    if c is not None:
        cbar.ax.axhline(c, color=OKABE_ITO["vermillion"], linewidth=2.5)
        cbar.ax.text(
            -0.15,
            c,
            "human\nceiling",
            ha="right",
            va="center",
            fontsize=7,
            transform=cbar.ax.get_yaxis_transform(),
        )
        sub.append(f"line on colour bar = human ceiling ({fmt_num(c, 2)})")
    set_title(ax, title, ["; ".join(sub)] if sub else [])
    return to_png(fig)


@styled
def confusion_matrix_plot(
    categories: Sequence[str],
    counts: Matrix,
    *,
    row_label: str = "human label",
    col_label: str = "judge label",
    title: str = "Judge vs human labels",
) -> bytes:
    """Counts of (human, judge) label pairs; colour is the share of the row (human label).

    The diagonal (agreement) is outlined. Rows are the human labels, columns the judge's.
    """
    n = len(categories)
    grid = _as_grid("confusion_matrix_plot", counts, n, n)
    shares = []
    for row in grid:
        tot = sum(v for v in row if v == v)
        shares.append([v / tot if tot and v == v else float("nan") for v in row])
    fig, ax, _ = _heatmap(
        categories,
        categories,
        shares,
        cmap=SEQUENTIAL_CMAP,
        vmin=0.0,
        vmax=1.0,
        digits=2,
        colorbar_label=f"share of the {row_label} row",
    )
    # replace the share annotations by count + share
    for t in list(ax.texts):
        t.remove()
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            s = shares[i][j]
            light = s == s and s > 0.55
            label = "0" if v != v else f"{round(v)}"
            if s == s:
                label += f"\n{100 * s:.0f}%"
            _cell_label(ax, i, j, label, light)
    from matplotlib.patches import Rectangle

    for i in range(n):
        ax.add_patch(
            Rectangle(
                (i - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=OKABE_ITO["orange"], linewidth=1.8
            )
        )
    total = sum(v for r in grid for v in r if v == v)
    agree = sum(grid[i][i] for i in range(n) if grid[i][i] == grid[i][i])
    ax.set_ylabel(row_label)
    ax.set_xlabel(col_label)
    pct = f"{100 * agree / total:.1f}%" if total else "n/a"
    set_title(ax, title, [f"n = {int(total)}; diagonal (outlined) = agreement, {pct}"])
    return to_png(fig)


@styled
def tau_heatmap(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    matrix: Matrix,
    *,
    title: str = "Kendall τ between rankings",
    metric: str = "Kendall τ-b",
) -> bytes:
    """Kendall τ (−1 … 1) between rankings, on a diverging purple–orange scale centred on 0."""
    grid = _as_grid("tau_heatmap", matrix, len(row_labels), len(col_labels))
    fig, ax, _ = _heatmap(
        row_labels,
        col_labels,
        grid,
        cmap=DIVERGING_CMAP,
        vmin=-1.0,
        vmax=1.0,
        digits=2,
        colorbar_label=metric,
    )
    set_title(ax, title, ["1 = same order, 0 = unrelated, −1 = reversed"])
    return to_png(fig)


@styled
def calibration_plot(
    judge_scores: Sequence[float],
    human_means: Sequence[float | None],
    counts: Sequence[int],
    *,
    lower: Sequence[float | None] | None = None,
    upper: Sequence[float | None] | None = None,
    identity: bool = False,
    title: str = "Calibration: judge score vs mean human score",
    xlabel: str = "judge score",
    ylabel: str = "mean human score",
) -> bytes:
    """Mean human score at each judge score, point size and label giving the count.

    Parameters
    ----------
    judge_scores
        The judge's score levels (x).
    human_means
        Mean human score of the items at each level (y); ``None`` where no item.
    counts
        Items per level (written next to each point).
    lower, upper
        Optional interval of each mean (vertical bars).
    identity
        Draw the y = x line (when judge and humans use the same scale).
    """
    n = len(judge_scores)
    for name, col in (
        ("human_means", human_means),
        ("counts", counts),
        ("lower", lower),
        ("upper", upper),
    ):
        if col is not None and len(col) != n:
            raise ValueError(f"calibration_plot: {name} has {len(col)} values, expected {n}")
    fig, ax = new_figure(5.6, 4.2)
    xs, ys, ns = [], [], []
    for i in range(n):
        y = to_float(human_means[i])
        if y is None:
            continue
        x = float(judge_scores[i])
        xs.append(x)
        ys.append(y)
        ns.append(int(counts[i]))
        lo = to_float(lower[i]) if lower is not None else None
        hi = to_float(upper[i]) if upper is not None else None
        if lo is not None and hi is not None:
            ax.vlines(x, lo, hi, color=OKABE_ITO["blue"], linewidth=1.5)
        ax.annotate(f"n={ns[-1]}", (x, y), xytext=(6, 4), textcoords="offset points", fontsize=7)
    biggest = max(ns) if ns else 1
    sizes = [30 + 170 * k / biggest for k in ns]
    ax.plot(xs, ys, color=OKABE_ITO["blue"], linewidth=1, alpha=0.6)
    ax.scatter(xs, ys, s=sizes, color=OKABE_ITO["vermillion"], zorder=3, edgecolor="white")
    if identity and xs:
        lo_, hi_ = min(xs + ys), max(xs + ys)
        ax.plot([lo_, hi_], [lo_, hi_], linestyle=":", color=OKABE_ITO["black"], linewidth=1)
        ax.annotate(
            "y = x (perfect calibration)",
            (hi_, hi_),
            xytext=(-4, -10),
            textcoords="offset points",
            ha="right",
            fontsize=7,
        )
    ax.margins(x=0.1, y=0.08)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(color="#eeeeee", linewidth=0.6)
    set_title(ax, title, ["point size and label = number of items"])
    return to_png(fig)


@styled
def value_heatmap(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    matrix: Matrix,
    *,
    metric: str,
    title: str,
    notes: Sequence[str] = (),
    ceiling: float | None = None,
    vmin: float | None = None,
    vmax: float = 1.0,
) -> bytes:
    """Any rows × columns table of one statistic (e.g. dimensions × judges), values written in
    the cells; an optional reference value (the human ceiling) is marked on the colour bar."""
    grid = _as_grid("value_heatmap", matrix, len(row_labels), len(col_labels))
    fig, ax, cbar = _heatmap(
        row_labels, col_labels, grid, vmin=vmin, vmax=vmax, colorbar_label=metric
    )
    c = to_float(ceiling)
    extra = list(notes)
    if c is not None:
        cbar.ax.axhline(c, color=OKABE_ITO["vermillion"], linewidth=2.5)
        extra.append(f"line on colour bar = human ceiling ({fmt_num(c, 2)})")
    set_title(ax, title, ["; ".join(extra)] if extra else [])
    return to_png(fig)
