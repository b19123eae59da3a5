"""Coverage simulations (slow): cluster vs iid bootstrap, simultaneous vs naive rank sets.

Run with ``pytest tests/calibration/test_simulation.py -m slow -s`` to see the figures.
Seeds are fixed, so the figures are reproducible.
"""

from __future__ import annotations

import numpy as np
import pytest

from attune_judge.calibration import (
    ClusterSums,
    bootstrap_weights,
    interval_endpoints,
    leaderboard,
    paired_cluster_bootstrap,
    ratio_replicates,
)

pytestmark = pytest.mark.slow


def test_cluster_bootstrap_covers_and_iid_turn_bootstrap_does_not() -> None:
    # 100 conversations × 10 turns, ICC 0.3 (design effect 1 + 9·0.3 = 3.7), true mean 0
    n_sims, C, T, B = 800, 100, 10, 1000
    rng = np.random.default_rng(2024)
    hits = {"cluster_bca": 0, "cluster_percentile": 0, "iid_turns": 0}
    clusters = np.repeat(np.arange(C), T)
    labels = ["m"] * (C * T)
    for s in range(n_sims):
        y = np.repeat(rng.normal(scale=np.sqrt(0.3), size=C), T) + rng.normal(
            scale=np.sqrt(0.7), size=C * T
        )
        sums = ClusterSums.from_long(labels, clusters, y)
        for method in ("bca", "percentile"):
            m = paired_cluster_bootstrap(sums, B=B, seed=s, method=method).means[0]  # type: ignore[arg-type]
            assert m.lower is not None and m.upper is not None
            hits[f"cluster_{method}"] += m.lower <= 0 <= m.upper
        # the known failure: resample turns as if independent
        W = bootstrap_weights(C * T, B, seed=s)
        reps = W @ y / C / T
        e = interval_endpoints(float(y.mean()), reps, method="percentile")
        assert e.lower is not None and e.upper is not None
        hits["iid_turns"] += e.lower <= 0 <= e.upper
    cov = {k: v / n_sims for k, v in hits.items()}
    print(f"\ncoverage of 95% intervals over {n_sims} simulations: {cov}")
    assert 0.93 <= cov["cluster_bca"] <= 0.97
    assert 0.93 <= cov["cluster_percentile"] <= 0.97
    assert cov["iid_turns"] < 0.85  # theory: P(|Z| < 1.96/√3.7) ≈ 0.69


def test_simultaneous_rank_sets_cover_jointly_with_near_ties() -> None:
    # six models: five near-tied (gaps 0.005, about 0.1 standard error of a difference) and
    # one clear winner; conversation effect shared (variance 0.2) + per model (0.1)
    theta = np.array([0.0, 0.005, 0.01, 0.015, 0.02, 0.5])
    true_rank = 1 + np.sum(theta[None, :] > theta[:, None], axis=1)
    n_sims, C, T = 200, 100, 10
    rng = np.random.default_rng(7)
    p = len(theta)
    names = [f"m{k}" for k in range(p)]
    models = np.tile(np.repeat(names, T), C)
    clusters = np.repeat(np.arange(C), p * T)
    cover = {"simultaneous": 0, "marginal_all": 0, "naive_bootstrap": 0, "arena": 0}
    for s in range(n_sims):
        u = np.repeat(rng.normal(scale=np.sqrt(0.2), size=C), p * T)
        v = np.repeat(rng.normal(scale=np.sqrt(0.1), size=(C, p)).ravel(), T)
        y = np.repeat(np.tile(theta, C), T) + u + v + rng.normal(scale=np.sqrt(0.7), size=C * p * T)
        lb = leaderboard(models.tolist(), clusters.tolist(), y, B=1000, seed=s, n_draws=5_000)
        rows = {r.model: r for r in lb.rows}
        ok = {k: True for k in cover}
        for j, name in enumerate(names):
            r, tr = rows[name], true_rank[j]
            ok["simultaneous"] &= r.rank_set_simultaneous[0] <= tr <= r.rank_set_simultaneous[1]
            ok["marginal_all"] &= r.rank_set_marginal[0] <= tr <= r.rank_set_marginal[1]
            ok["naive_bootstrap"] &= r.naive_rank_interval[0] <= tr <= r.naive_rank_interval[1]
            ok["arena"] &= r.arena_rank_upper_bound <= tr
        for k in cover:
            cover[k] += ok[k]
    joint = {k: v / n_sims for k, v in cover.items()}
    print(f"\njoint coverage of all six true ranks over {n_sims} simulations: {joint}")
    assert joint["simultaneous"] >= 0.95
    assert joint["naive_bootstrap"] < 0.85


def test_ratio_replicates_scale_to_the_benchmark_size() -> None:
    # the benchmark shape must run (sanity; the timing itself is in benchmarks/)
    sums = ClusterSums(
        [str(c) for c in range(200)],
        [f"m{k}" for k in range(11)],
        np.ones((200, 11)) * 10.0,
        np.ones((200, 11)) * 10.0,
    )
    reps = ratio_replicates(sums, bootstrap_weights(200, 10_000))
    assert reps.shape == (10_000, 11) and np.allclose(reps, 1.0)
