"""The vectorised cluster draws are numpy's own ``Generator.integers`` draws, counted."""

from __future__ import annotations

import numpy as np
import pytest

from attune_judge.calibration import bootstrap_weights
from attune_judge.calibration._draws import _Uint32Stream


def _counted_numpy_draws(n_clusters: int, B: int, seed: int) -> np.ndarray:
    """Each row: C draws of ``rng.integers(0, C, dtype=int32)`` counted per cluster."""
    rng = np.random.default_rng(seed)
    rows = max(1, 4_000_000 // n_clusters)  # the blocks iter_bootstrap_weights draws
    out = []
    for start in range(0, B, rows):
        b = min(rows, B - start)
        draws = rng.integers(0, n_clusters, size=(b, n_clusters), dtype=np.int32)
        for row in draws:
            out.append(np.bincount(row, minlength=n_clusters))
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize(
    ("n_clusters", "B", "seed"),
    [(1, 4, 0), (2, 7, 1), (3, 5, 2), (15, 301, 3), (200, 700, 0), (333, 401, 4), (20_001, 201, 5)],
)
def test_weights_are_numpys_integer_draws_counted(n_clusters: int, B: int, seed: int) -> None:
    # odd C × odd rows leave half a 64-bit output buffered between blocks; 20,001 clusters
    # make iter_bootstrap_weights draw in several chunks
    W = bootstrap_weights(n_clusters, B, seed)
    assert np.array_equal(W, _counted_numpy_draws(n_clusters, B, seed))


@pytest.mark.parametrize("n_values", [5, 200, 2**31 - 1, 2**31 + 12_345, 3 * 2**30, 2**32 - 1])
@pytest.mark.parametrize(("n1", "n2"), [(1, 1), (3, 4), (1_000, 1_001), (0, 5)])
def test_stream_matches_integers_with_rejections_and_buffered_halves(
    n_values: int, n1: int, n2: int
) -> None:
    # 3·2**30 values reject a quarter of the 32-bit draws (2**32 mod C = 2**30)
    ours, theirs = np.random.default_rng(11), np.random.default_rng(11)
    ours.integers(0, 7, size=3, dtype=np.int32)  # three 32-bit draws: half an output buffered
    theirs.integers(0, 7, size=3, dtype=np.int32)
    stream = _Uint32Stream(ours)
    first, second = stream.bounded(n_values, n1), stream.bounded(n_values, n2)
    stream.close()
    assert np.array_equal(first, theirs.integers(0, n_values, size=n1, dtype=np.int64))
    assert np.array_equal(second, theirs.integers(0, n_values, size=n2, dtype=np.int64))
    assert ours.bit_generator.state == theirs.bit_generator.state
    assert np.array_equal(ours.integers(0, 100, 9), theirs.integers(0, 100, 9))


def test_weights_have_the_multinomial_moments() -> None:
    W = bootstrap_weights(40, 20_000, seed=3)
    assert np.all(W.sum(1) == 40)
    # Multinomial(40, 1/40): mean 1, variance 39/40, covariance between clusters −1/40
    assert W.mean() == pytest.approx(1.0)
    assert W.var(0).mean() == pytest.approx(39 / 40, rel=0.02)
    assert np.cov(W[:, 0], W[:, 1])[0, 1] == pytest.approx(-1 / 40, abs=0.01)
