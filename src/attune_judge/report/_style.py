"""Figure style: the Okabe–Ito palette, colour-blind-safe colour maps, Agg rendering to PNG.

matplotlib is imported lazily (inside the functions), so importing the report package costs
nothing until a figure is drawn. Figures never go through pyplot: no global state, no backend
switch, nothing to close.
"""

from __future__ import annotations

import functools
import io
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

from attune_judge.report._figcache import cached_figure

P = ParamSpec("P")
R = TypeVar("R")

__all__ = [
    "DIVERGING_CMAP",
    "DPI",
    "OKABE_ITO",
    "SEQUENTIAL_CMAP",
    "STATUS_COLOURS",
    "height_for",
    "label_width",
    "new_figure",
    "set_title",
    "styled",
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


def _rc() -> Any:
    """The report's rcParams (typed loosely: matplotlib types the keys as a Literal)."""
    from cycler import cycler

    return {
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
        # labels are untrusted text (model names): a "$" must never start mathtext
        "text.parse_math": False,
    }


def styled(fn: Callable[P, R]) -> Callable[P, R]:
    """Run a figure function inside the report's matplotlib style (``rc_context``).

    The global ``rcParams`` and the user's backend are left untouched: figures are made with
    ``matplotlib.figure.Figure`` (no pyplot, no figure manager) and rendered by Agg. Inside
    :func:`write_report` a figure whose inputs did not change since the run directory's last
    report is not drawn again (:mod:`attune_judge.report._figcache`). In the ``attune-judge``
    run commands a figure is drawn by the worker process that imported matplotlib during the
    run (:mod:`attune_judge._figworker`, issue 47), the same bytes; without one, here.
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        def draw() -> R:
            from attune_judge import _figworker

            png = _figworker.draw(fn, args, kwargs)  # the CLI's worker process (issue 47)
            if png is not None:
                return png  # type: ignore[return-value]  # figure functions return PNG bytes
            import matplotlib

            with matplotlib.rc_context(_rc()):
                return fn(*args, **kwargs)

        result: R = cached_figure(fn, args, kwargs, draw)  # reused when nothing changed
        return result

    return wrapper


def new_figure(width: float, height: float) -> tuple[Any, Any]:
    """A new ``(figure, axes)`` pair of the given size in inches (constrained layout)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    return fig, fig.subplots()


def to_png(fig: Any) -> bytes:
    """Render ``fig`` to PNG bytes with Agg (titles re-wrapped to the room left after layout)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fit_titles(fig)
    buf = io.BytesIO()
    # no software tag: the bytes do not depend on the matplotlib version
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


_TITLE = "_attune_title"
"""Where :func:`set_title` keeps an axes' title, notes and wrap width for :func:`fit_titles`."""


def _place_title(ax: Any, state: dict[str, Any]) -> None:
    chars = state["chars"]
    lines = textwrap.wrap(state["title"], chars)
    note_lines = [ln for n in state["notes"] for ln in textwrap.wrap(n, int(chars * 1.2))]
    ax.set_title("\n".join(lines), loc="left", pad=6 + 11 * len(note_lines))
    if state.get("note") is not None:
        state["note"].remove()
        state["note"] = None
    if note_lines:
        state["note"] = ax.annotate(
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


def set_title(
    ax: Any, title: str, notes: Sequence[str] = (), *, width_in: float | None = None
) -> None:
    """A bold title plus reading notes, wrapped so nothing is clipped.

    ``width_in`` is the room from the axes' left edge to the figure's right edge, in inches
    (default: estimated from the axes' position before layout). The estimate is a first
    guess: :func:`to_png` measures the drawn title after layout and wraps it narrower when it
    runs past the figure's edge.
    """
    if width_in is None:
        width_in = ax.get_figure().get_figwidth() * ax.get_position().width
    state = {"title": title, "notes": tuple(notes), "chars": max(int(width_in * 11.5), 24)}
    setattr(ax, _TITLE, state)
    _place_title(ax, state)


def fit_titles(fig: Any, rounds: int = 5) -> None:
    """Re-wrap every :func:`set_title` title (and its notes) that, once laid out, runs past
    the figure's right edge: measured on the drawn text, not estimated."""
    for _ in range(rounds):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        right = fig.bbox.x1 - 2
        changed = False
        for ax in fig.axes:
            state = getattr(ax, _TITLE, None)
            if state is None:
                continue
            texts = [ax._left_title] + ([state["note"]] if state.get("note") is not None else [])
            boxes = [t.get_window_extent(renderer) for t in texts]
            over = max(b.x1 for b in boxes)
            if over <= right or state["chars"] <= 12:
                continue
            left = min(b.x0 for b in boxes)
            ratio = (right - left) / max(over - left, 1.0)
            state["chars"] = max(12, min(state["chars"] - 1, int(state["chars"] * ratio)))
            _place_title(ax, state)
            changed = True
        if not changed:
            return


def label_width(labels: Sequence[str], fontsize: float = 9) -> float:
    """Approximate width in inches of the longest tick label (for sizing figures)."""
    longest = max((len(str(x)) for x in labels), default=0)
    return 0.2 + longest * fontsize * 0.6 / 72


def height_for(n_rows: int, *, per_row: float = 0.38, base: float = 1.4) -> float:
    """Figure height in inches for a chart with ``n_rows`` horizontal rows."""
    return base + per_row * max(n_rows, 1)
