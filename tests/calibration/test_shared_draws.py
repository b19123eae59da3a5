"""Statistics composed on one shared cluster draw: Kendall's W of several rankings with a
bootstrap interval, and leaderboards that reuse a given weights matrix."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from attune_judge.calibration import (
    ClusterSums,
    bootstrap_weights,
    kendalls_w_rankings,
    leaderboard,
    leaderboard_from_sums,
)
from attune_judge.errors import UserError


def _table(values: dict[str, list[float]], clusters: list[str]) -> ClusterSums:
    """One value per (cluster, model): ``values[model][c]``."""
    models, cl, sc = [], [], []
    for m, vals in values.items():
        for c, v in zip(clusters, vals, strict=True):
            models.append(m)
            cl.append(c)
            sc.append(v)
    return ClusterSums.from_long(models, cl, sc)


def test_kendalls_w_rankings_point_by_hand() -> None:
    cl = ["c1", "c2"]
    # means: T1 and T2 rank m1 > m2 > m3, T3 ranks m1 > m3 > m2.
    # Ranks (3 = best): m1 = 3+3+3 = 9, m2 = 2+2+1 = 5, m3 = 1+1+2 = 4; mean m(n+1)/2 = 6;
    # S = 9 + 1 + 4 = 14; W = 12·14 / (3²·(3³ − 3)) = 168 / 216 = 7/9.
    t1 = _table({"m1": [3, 3], "m2": [2, 2], "m3": [1, 1]}, cl)
    t2 = _table({"m1": [9, 7], "m2": [5, 5], "m3": [0, 2]}, cl)
    t3 = _table({"m1": [4, 4], "m2": [0, 0], "m3": [1, 3]}, cl)
    res = kendalls_w_rankings({"a": t1, "b": t2, "c": t3}, B=50, seed=1)
    assert res.point.w == pytest.approx(7 / 9)
    assert res.interval.estimate == pytest.approx(7 / 9)
    assert res.rankings == ["a", "b", "c"]
    assert res.models == ["m1", "m2", "m3"]
    assert res.interval.name == "kendalls_w" and res.interval.B == 50


def _spearman_w(means: np.ndarray) -> float:
    """W from the mean pairwise Spearman ρ: W = ((m − 1)·ρ̄ + 1) / m (no ties)."""
    m = means.shape[0]
    rhos = [stats.spearmanr(means[i], means[j])[0] for i, j in itertools.combinations(range(m), 2)]
    return float(((m - 1) * np.mean(rhos) + 1) / m)


def test_kendalls_w_rankings_interval_matches_an_independent_loop() -> None:
    rng = np.random.default_rng(11)
    C, B, seed = 15, 400, 7
    cl = [f"c{i:02d}" for i in range(C)]
    tables = {
        t: _table({f"m{k}": list(rng.normal(loc=0.4 * k, size=C)) for k in range(4)}, cl)
        for t in ("x", "y", "z")
    }
    res = kendalls_w_rankings(tables, B=B, seed=seed, level=0.9)
    # independent: weighted means by explicit loops on the same draw, W via Spearman's ρ
    W = bootstrap_weights(C, B, seed)
    reps = []
    for w in W:
        means = np.array(
            [
                [
                    sum(w[c] * tables[t].sums[c, k] for c in range(C))
                    / sum(w[c] * tables[t].counts[c, k] for c in range(C))
                    for k in range(4)
                ]
                for t in ("x", "y", "z")
            ]
        )
        reps.append(_spearman_w(means))
    lo, hi = np.quantile(reps, [0.05, 0.95])
    assert res.interval.method == "percentile"
    assert res.interval.lower == pytest.approx(lo)
    assert res.interval.upper == pytest.approx(hi)
    point = np.array([tables[t].estimate for t in ("x", "y", "z")])
    assert res.point.w == pytest.approx(_spearman_w(point))


def test_kendalls_w_rankings_uses_models_common_to_all_tables() -> None:
    cl = ["c1", "c2"]
    t1 = _table({"m1": [3, 3], "m2": [2, 2], "m3": [1, 1], "extra": [9, 9]}, cl)
    t2 = _table({"m1": [1, 1], "m2": [2, 2], "m3": [3, 3]}, cl)
    # reversed rankings of m1..m3 → W = 0 (the extra model is ignored)
    res = kendalls_w_rankings({"a": t1, "b": t2}, B=20)
    assert res.models == ["m1", "m2", "m3"]
    assert res.point.w == pytest.approx(0.0)


def test_kendalls_w_rankings_needs_two_rankings_of_two_models() -> None:
    cl = ["c1", "c2"]
    t = _table({"m1": [1, 2], "m2": [2, 3]}, cl)
    with pytest.raises(UserError, match="at least two rankings"):
        kendalls_w_rankings({"only": t}, B=10)
    u = _table({"m1": [1, 2], "m3": [2, 3]}, cl)
    with pytest.raises(UserError, match="fewer than two models"):
        kendalls_w_rankings({"a": t, "b": u}, B=10)


def test_leaderboards_share_a_given_draw() -> None:
    rng = np.random.default_rng(3)
    C, B = 12, 300
    cl = [f"c{i:02d}" for i in range(C)]
    W = bootstrap_weights(C, B, 99)
    for shift in (0.0, 1.0):  # two score sets, one draw
        vals = {f"m{k}": list(rng.normal(loc=shift + 0.5 * k, size=C)) for k in range(3)}
        models = [m for m in vals for _ in cl]
        clusters = [c for _ in vals for c in cl]
        scores = [v for m in vals for v in vals[m]]
        lb = leaderboard(
            models, clusters, scores, weights=W, method="percentile", n_draws=2_000, level=0.9
        )
        assert lb.B == B and lb.bootstrap.weights is not None
        assert np.array_equal(lb.bootstrap.weights, W)
        for row in lb.rows:
            x = np.array(vals[row.model])
            # one value per cluster: replicate mean = Σ w_c x_c / Σ w_c
            reps = [float(np.dot(w, x) / w.sum()) for w in W]
            lo, hi = np.quantile(reps, [0.05, 0.95])
            assert row.score.lower == pytest.approx(lo)
            assert row.score.upper == pytest.approx(hi)
            assert row.score.B == B


def test_leaderboard_rejects_weights_of_the_wrong_shape() -> None:
    with pytest.raises(UserError, match="one column per cluster"):
        leaderboard(
            ["a", "b", "a", "b"], ["c1", "c1", "c2", "c2"], [1, 2, 3, 4], weights=np.ones((5, 3))
        )


def test_leaderboard_from_sums_pools_counts_as_a_ratio() -> None:
    # a: sums 2, 3, 1 over counts 2, 4, 1 → 6/7; b: 1 per cluster over 1 → 1. b ranks first.
    sums = ClusterSums(
        clusters=["c1", "c2", "c3"],
        labels=["a", "b"],
        sums=np.array([[2.0, 1.0], [3.0, 1.0], [1.0, 1.0]]),
        counts=np.array([[2.0, 1.0], [4.0, 1.0], [1.0, 1.0]]),
    )
    W = bootstrap_weights(3, 200, 5)
    lb = leaderboard_from_sums(sums, weights=W, method="percentile", n_draws=2_000)
    assert [r.model for r in lb.rows] == ["b", "a"]
    a = next(r for r in lb.rows if r.model == "a")
    assert a.score.estimate == pytest.approx(6 / 7)
    assert a.n == 7 and a.n_clusters == 3
    # replicate of a: Σ w_c S_c / Σ w_c n_c, by a loop over the same draw
    reps = [float(np.dot(w, [2, 3, 1]) / np.dot(w, [2, 4, 1])) for w in W]
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert a.score.lower == pytest.approx(lo) and a.score.upper == pytest.approx(hi)
