"""Figure titles are wrapped to the room left after layout (issue 46: rank-set titles were
clipped on the right because the room was estimated before long tick labels moved the axes)."""

from __future__ import annotations

# private unit: the figure title fitting and PNG rendering
from attune_judge.report._style import new_figure, set_title, to_png


def test_a_long_title_beside_long_tick_labels_stays_inside_the_figure() -> None:
    fig, ax = new_figure(8.0, 3.5)
    names = [f"provider/long-candidate-model-{k}-instruct" for k in range(4)]
    ax.barh(range(4), [1, 2, 3, 4])
    ax.set_yticks(range(4), names)
    title = "Rank sets at 95 % simultaneous confidence: which models could be first " * 2
    set_title(ax, title.strip(), ["Read: a model's set holds every rank it could take."] * 2)
    png = to_png(fig)
    assert png.startswith(b"\x89PNG")
    renderer = fig.canvas.get_renderer()
    right = fig.bbox.x1
    for text in (ax._left_title, *ax.texts):
        box = text.get_window_extent(renderer)
        assert box.x1 <= right, (text.get_text()[:40], box.x1, right)
        assert box.x0 >= 0
    assert ax.get_title(loc="left").count("\n") >= 2  # wrapped, not cut
