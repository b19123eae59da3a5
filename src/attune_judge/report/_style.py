"""Figure style: the Okabe–Ito palette, colour-blind-safe colour maps, Agg rendering to PNG.

matplotlib is imported lazily (inside :func:`pyplot`), so importing the report package costs
nothing until a figure is drawn, and the Agg backend is selected before pyplot is loaded.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from typing import Any

__all__ = [
    "DIVERGING_CMAP",
    "DPI",
    "OKABE_ITO",
    "SEQUENTIAL_CMAP",
    "STATUS_COLOURS",
    "new_figure",
    "pyplot",
    "set_title",
    "to_png",
]

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
"""Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision
deficiency."""

STATUS_COLOURS = {
    "ok": OKABE_ITO["bluish_green"],
    "parse_error": OKABE_ITO["orange"],
    "lm_error": OKABE_ITO["vermillion"],
    "refused": OKABE_ITO["reddish_purple"],
    "missing": "#999999",
}
"""One colour per judgment status (failures in warm colours, missing in grey)."""

SEQUENTIAL_CMAP = "cividis"
"""Sequential colour map designed for colour-vision deficiency (Nuñez et al. 2018)."""
DIVERGING_CMAP = "PuOr"
"""Diverging colour map (purple–orange) readable with red–green deficiency."""
DPI = 100
"""Resolution of saved figures (small files, fast tests; crisp enough on screen)."""


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the Agg backend and the report's style applied."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.rcParams.update(
        {
            "axes.prop_cycle": cycler(color=list(OKABE_ITO.values())[1:]),
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 11,
            "axes.titleweight": "bold",
            "axes.labelsize": 10,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
            "font.size": 9,
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
        }
    )
    return plt


def new_figure(width: float, height: float) -> tuple[Any, Any]:
    """A new ``(figure, axes)`` pair of the given size in inches."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def to_png(fig: Any) -> bytes:
    """Render ``fig`` to PNG bytes and close it (figures never accumulate in memory)."""
    plt = pyplot()
    buf = io.BytesIO()
    try:
        # no software tag: the bytes do not depend on the matplotlib version
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()


def set_title(ax: Any, title: str, notes: Sequence[str] = ()) -> None:
    """A bold title plus reading notes, wrapped to the axes' width so nothing is clipped."""
    fig = ax.get_figure()
    width_in = fig.get_figwidth() * ax.get_position().width
    bold_chars = max(int(width_in * 11.5), 24)
    lines = textwrap.wrap(title, bold_chars)
    note_lines = [ln for n in notes for ln in textwrap.wrap(n, int(bold_chars * 1.2))]
    ax.set_title("\n".join(lines), loc="left", pad=6 + 11 * len(note_lines))
    if note_lines:
        ax.annotate(
            "\n".join(note_lines),
            (0, 1),
            xycoords="axes fraction",
            xytext=(0, 4),
            textcoords="offset points",
            va="bottom",
            ha="left",
            fontsize=8,
            color="#333333",
        )


def height_for(n_rows: int, *, per_row: float = 0.38, base: float = 1.4) -> float:
    """Figure height in inches for a chart with ``n_rows`` horizontal rows."""
    return base + per_row * max(n_rows, 1)
