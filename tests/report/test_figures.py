"""Figure functions take plain numbers and return PNG images of the documented size and colours.

Sizes: figures are drawn at 100 dpi; the forest and rank-set plots are 7 in wide and
``1.4 + 0.38 × rows`` in high, so three rows give 700 × 254 px (hand computation).
"""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest

from attune_judge.report import (
    agreement_heatmap,
    calibration_plot,
    confusion_matrix_plot,
    forest_plot,
    rank_set_plot,
    status_plot,
    tau_heatmap,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# two colours of the Okabe & Ito (2008) palette the figures use
VERMILLION = "#D55E00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def has_colour(png: bytes, hex_colour: str, tol: int = 6) -> bool:
    """Whether any pixel is within ``tol`` (per channel, 0-255) of ``hex_colour``."""
    import matplotlib.image

    rgb = (matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3] * 255).astype(int)
    target = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])
    return bool(np.any(np.all(np.abs(rgb - target) <= tol, axis=-1)))


def test_forest_plot_size_follows_the_number_of_rows() -> None:
    png = forest_plot(["a", "b", "c"], [0.7, 0.5, 0.2], [0.6, 0.4, 0.1], [0.8, 0.6, 0.3])
    # 7 in × 100 dpi = 700; (1.4 + 0.38 × 3) in × 100 dpi = 254
    assert png_size(png) == (700, 254)


def test_forest_plot_draws_estimates_in_vermillion_and_nothing_for_undefined_ones() -> None:
    drawn = forest_plot(["a", "b"], [0.7, 0.5], [0.6, 0.4], [0.8, 0.6])
    assert has_colour(drawn, VERMILLION)
    undefined = forest_plot(["a", "b"], [None, float("nan")], [None, None], [None, None])
    assert not has_colour(undefined, VERMILLION)


def test_rank_set_plot_draws_bars_in_sky_blue() -> None:
    png = rank_set_plot(["a", "b", "c", "d"], [1, 1, 3, 3], [2, 2, 4, 4], point_ranks=[1, 2, 3, 4])
    w, h = png_size(png)
    # (1.4 + 0.38 × 4) in = 2.92 in → 292 px (±1 for rounding)
    assert w == 700 and abs(h - 292) <= 1
    assert has_colour(png, SKY_BLUE)
    no_sets = rank_set_plot(["a", "b"], [None, None], [None, None])
    assert not has_colour(no_sets, SKY_BLUE)


def test_agreement_heatmap_outlines_the_judge_in_vermillion() -> None:
    matrix = [[None, 0.6, 0.4], [0.6, None, 0.3], [0.4, 0.3, None]]
    plain = agreement_heatmap(["h1", "h2", "judge"], matrix)
    marked = agreement_heatmap(["h1", "h2", "judge"], matrix, highlight=["judge"], ceiling=0.6)
    assert not has_colour(plain, VERMILLION)
    assert has_colour(marked, VERMILLION)


def test_confusion_tau_calibration_and_status_plots_render() -> None:
    for png in (
        confusion_matrix_plot(["yes", "no"], [[30, 10], [5, 55]]),
        tau_heatmap(["base", "v1"], ["base", "v1"], [[1.0, 0.2], [0.2, 1.0]]),
        calibration_plot([1, 2, 3], [1.2, None, 2.8], [4, 0, 6], identity=True),
        status_plot(["a", "b"], {"ok": [3, 2], "parse_error": [0, 1], "missing": [1, 0]}),
    ):
        w, h = png_size(png)
        assert w > 300 and h > 200


def test_status_plot_uses_the_status_colours() -> None:
    png = status_plot(["a"], {"ok": [5], "lm_error": [2]})
    assert has_colour(png, BLUISH_GREEN)
    assert has_colour(png, VERMILLION)


@pytest.mark.parametrize(
    "call",
    [
        lambda: forest_plot(["a", "b"], [0.1], [0.0], [0.2]),
        lambda: rank_set_plot(["a"], [1, 2], [1, 2]),
        lambda: agreement_heatmap(["a", "b"], [[1.0, 0.5]]),
        lambda: confusion_matrix_plot(["x", "y"], [[1, 2], [3]]),
        lambda: calibration_plot([1, 2], [1.0], [1, 1]),
        lambda: status_plot(["a", "b"], {"ok": [1]}),
    ],
)
def test_mismatched_lengths_are_rejected(call: object) -> None:
    # our own length checks, not whatever ValueError numpy/matplotlib raise further down
    with pytest.raises(ValueError, match=r"values, expected|matrix must be"):
        call()  # type: ignore[operator]


def test_figures_leave_the_global_matplotlib_state_alone() -> None:
    import matplotlib

    before = {k: matplotlib.rcParams[k] for k in ("axes.titlesize", "axes.spines.top")}
    backend = matplotlib.get_backend()
    forest_plot(["a"], [0.5], [0.4], [0.6])
    assert {k: matplotlib.rcParams[k] for k in before} == before
    assert matplotlib.get_backend() == backend


def test_dollar_signs_in_labels_are_text_not_mathtext() -> None:
    # unbalanced and malformed mathtext would raise if parsed
    png = forest_plot(["cost $5", r"$\frac{$"], [0.5, 0.4], [0.4, 0.3], [0.6, 0.5], title="a $ b")
    assert png_size(png)[0] == 700
