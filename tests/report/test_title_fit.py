"""Figure titles are wrapped to the room left after layout (issue 46: rank-set titles were
clipped on the right because the room was estimated before long tick labels moved the axes).
A figure the run commands' worker process cannot draw is drawn in-process (issue 47)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from matplotlib.figure import Figure as MplFigure

# private unit: the figure title fitting and PNG rendering, here or by the figure worker
from attune_judge import _figworker
from attune_judge.report import status_plot
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


def test_a_figure_the_worker_fails_on_is_drawn_here_and_the_worker_draws_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = {"ok": [3, 4], "lm_error": [1, 0]}
    expected = status_plot(["a", "b"], counts)  # no worker: drawn here
    here: list[int] = []
    savefig = MplFigure.savefig

    def counting(self: MplFigure, *args: Any, **kwargs: Any) -> Any:
        here.append(1)
        return savefig(self, *args, **kwargs)

    monkeypatch.setattr(MplFigure, "savefig", counting)
    # a long-lived process holds many files: its pipes to the worker get numbers above 1024,
    # where select() fails (a full `make test` run's xdist worker got there and drew here)
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    _figworker.start([])  # the figure modules are imported on demand
    try:
        with pytest.raises(ValueError, match="values, expected"):  # this process's own error
            status_plot(["a", "b"], {"ok": [1]})
        assert status_plot(["a", "b"], counts) == expected
        assert status_plot(["b", "a"], counts) != expected
        assert not here  # both drawn by the worker, still running after the error
    finally:
        _figworker.stop()
        for fd in held:
            os.close(fd)
