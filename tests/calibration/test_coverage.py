"""Coverage simulations for few conversations (seeded; about a minute in total).

Data: C conversations of 2–15 turns; every model's turn score is a 1–5 rating
``clip(round(3 + u_c + v_cm + e), 1, 5)`` with a conversation effect ``u_c ~ N(0, 0.8²)``, a
model-in-conversation effect ``v_cm ~ N(0, 0.4²)`` and turn noise ``e ~ N(0, 0.9²)``. Every
score is symmetric around 3, so every model's true mean is exactly 3 and every true difference 0
(all models tied) — the truth needs no simulation of its own.

Checked:
- the default interval of a mean and of a difference (symmetric studentized cluster bootstrap)
  covers 93–97% at C = 10, 15 and 60, where percentile intervals fall short at 10 and 15;
- simultaneous rank sets with all 8 models tied keep ≥ 95% joint coverage at C = 15 and 60
  (joint coverage = no pair of tied models declared different).
The figures are printed with ``-s``.
"""

from __future__ import annotations

import numpy as np
import pytest

from attune_judge.calibration import (
    ClusterSums,
    StudentizedDraws,
    bootstrap_weights,
    cluster_robust_covariance,
    difference_intervals,
    paired_cluster_bootstrap,
    rank_confidence_sets,
)


def _data(rng: np.random.Generator, C: int, M: int) -> ClusterSums:
    m = rng.integers(2, 16, C)
    u = rng.normal(0, 0.8, C)
    v = rng.normal(0, 0.4, (C, M))
    conv = np.repeat(np.arange(C), m)
    x = np.clip(np.round(3 + u[conv, None] + v[conv] + rng.normal(0, 0.9, (len(conv), M))), 1, 5)
    S = np.zeros((C, M))
    np.add.at(S, conv, x)
    N = np.repeat(m[:, None], M, axis=1).astype(float)
    return ClusterSums([f"c{c:03d}" for c in range(C)], [f"m{j}" for j in range(M)], S, N)


def _mean_coverage(C: int, n_sims: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    hits = {"mean_studentized": 0, "diff_studentized": 0, "mean_percentile": 0}
    for s in range(n_sims):
        sums = _data(rng, C, 2)
        W = bootstrap_weights(C, 999, seed=s)
        res = paired_cluster_bootstrap(sums, weights=W)
        m = res.means[0]
        assert m.method == "studentized" and m.lower is not None and m.upper is not None
        hits["mean_studentized"] += m.lower <= 3.0 <= m.upper
        pct = paired_cluster_bootstrap(sums, weights=W, method="percentile").means[0]
        hits["mean_percentile"] += pct.lower <= 3.0 <= pct.upper  # type: ignore[operator]
        dm = difference_intervals(sums, [(0, 1)], weights=W)[0]
        assert dm.method == "studentized"
        hits["diff_studentized"] += dm.lower <= 0.0 <= dm.upper  # type: ignore[operator]
    return {k: v / n_sims for k, v in hits.items()}


@pytest.mark.parametrize(("C", "n_sims"), [(10, 600), (15, 600), (60, 300)])
def test_studentized_intervals_cover_with_few_conversations(C: int, n_sims: int) -> None:
    cov = _mean_coverage(C, n_sims, seed=C)
    print(f"\nC={C}: coverage of 95% intervals over {n_sims} data sets: {cov}")
    assert 0.93 <= cov["mean_studentized"] <= 0.97
    assert 0.93 <= cov["diff_studentized"] <= 0.97
    if C <= 15:
        assert cov["mean_percentile"] < cov["mean_studentized"]


def _tied_joint_coverage(C: int, n_sims: int, seed: int, M: int = 8) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    hits = {"bootstrap_max_t": 0, "normal": 0}
    for s in range(n_sims):
        sums = _data(rng, C, M)
        cov = cluster_robust_covariance(sums)
        draws = StudentizedDraws(sums, bootstrap_weights(C, 1000, seed=s))
        rs = rank_confidence_sets(sums.estimate, cov, sums.labels, draws=draws)
        hits["bootstrap_max_t"] += rs.lower == [1] * M and rs.upper == [M] * M
        old = rank_confidence_sets(sums.estimate, cov, sums.labels, n_draws=4000, seed=s)
        hits["normal"] += old.lower == [1] * M and old.upper == [M] * M
    return {k: v / n_sims for k, v in hits.items()}


@pytest.mark.parametrize(
    ("C", "n_sims", "floor"), [(10, 300, 0.95), (15, 300, 0.95), (60, 400, 0.93)]
)
def test_rank_sets_cover_jointly_when_all_models_tie(C: int, n_sims: int, floor: float) -> None:
    # at 60 conversations the bootstrap is close to exact (≈ 95%): the floor leaves two
    # Monte-Carlo standard errors (400 data sets: ±1.1%) instead of demanding luck
    cov = _tied_joint_coverage(C, n_sims, seed=100 + C)
    print(f"\nC={C}: joint coverage of simultaneous rank sets, 8 tied models: {cov}")
    assert cov["bootstrap_max_t"] >= floor
    assert cov["normal"] < cov["bootstrap_max_t"]
