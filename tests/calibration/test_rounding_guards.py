"""Two guards against rounding in the bootstrap's standard errors (issue 25).

Every score 0.1 in a conversation: a replicate's expanded cluster-robust variance
``Σw(S − θ*n)²`` cancels to about 1e-18 instead of 0, and a deviation divided by its square
root was a huge finite t*. The ratio estimator's replicate variance sets what is below
rounding to 0, and a studentized interval wider than the cluster means' range falls back to
the percentile interval. Through the public intervals neither guard shows while the other (and
the zero-spread check after them) holds, so each is checked here on its own.
"""

from __future__ import annotations

import numpy as np

from attune_judge.calibration import ClusterSums, bootstrap_weights

# private unit: the replicate variance (resampling._ratio) and the studentized interval's
# percentile fallback (resampling._means), each guard on its own
from attune_judge.calibration.resampling._means import studentized_or_percentile
from attune_judge.calibration.resampling._ratio import ratio_replicate_variances


def test_replicate_variance_without_spread_is_zero_not_rounding_noise() -> None:
    S = np.array([[0.1 * 3], [0.1 * 7], [0.1 * 5]])
    n = np.array([[3.0], [7.0], [5.0]])
    sums = ClusterSums(["a", "b", "c"], ["m"], S, n)
    W = bootstrap_weights(3, 200, seed=1)
    assert np.all(ratio_replicate_variances(sums, W) == 0.0)


def test_implausibly_wide_studentized_interval_falls_back_to_percentile() -> None:
    reps = np.linspace(0.4, 0.6, 1000)
    tstar = np.full(1000, 1e6)  # what rounding in SE* produced: huge finite t-values
    ends = studentized_or_percentile(0.5, 0.05, tstar, reps, 0.95, span=0.2)
    assert ends.method == "percentile"
    assert 0.4 <= ends.lower <= ends.upper <= 0.6  # type: ignore[operator]
    assert ends.note is not None and "implausibly wide" in ends.note
