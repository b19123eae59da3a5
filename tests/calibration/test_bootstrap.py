"""The paired cluster bootstrap engine: weights, ratio estimator, intervals, covariance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attune_judge.calibration import (
    ClusterSums,
    bootstrap_means,
    bootstrap_weights,
    cluster_robust_covariance,
    interval_endpoints,
    paired_cluster_bootstrap,
    ratio_replicates,
)


def _clustered(C: int, M: int, turns: int, icc: float, seed: int) -> tuple[list, list, list]:
    """Scores with a shared per-conversation effect (ICC = icc) and per-model shifts."""
    rng = np.random.default_rng(seed)
    models, clusters, scores = [], [], []
    for c in range(C):
        u = rng.normal(scale=np.sqrt(icc))
        for m in range(M):
            for _ in range(turns):
                models.append(f"m{m}")
                clusters.append(f"c{c:03d}")
                scores.append(0.1 * m + u + rng.normal(scale=np.sqrt(1 - icc)))
    return models, clusters, scores


def test_multinomial_weights_resample_c_clusters_and_are_seeded() -> None:
    W = bootstrap_weights(50, 300, seed=7)
    assert W.shape == (300, 50)
    assert np.all(W.sum(1) == 50)
    assert np.array_equal(W, bootstrap_weights(50, 300, seed=7))
    assert not np.array_equal(W, bootstrap_weights(50, 300, seed=8))
    # each weight ~ Binomial(50, 1/50): mean 1, variance 49/50
    assert W.mean() == pytest.approx(1.0, abs=0.02)
    assert W.var() == pytest.approx(0.98, abs=0.05)
    P = bootstrap_weights(50, 300, seed=7, scheme="poisson")
    assert P.mean() == pytest.approx(1.0, abs=0.03)


def test_ratio_replicates_equal_resampling_conversations_by_hand() -> None:
    models, clusters, scores = _clustered(12, 2, 3, 0.3, seed=1)
    sums = ClusterSums.from_long(models, clusters, scores)
    W = bootstrap_weights(12, 5, seed=3)
    reps = ratio_replicates(sums, W)
    arr_m, arr_c, arr_s = np.array(models), np.array(clusters), np.array(scores)
    for b in range(5):
        # duplicate each conversation w_c times and take the plain mean of its turns
        picked = np.concatenate(
            [
                np.flatnonzero(arr_c == c)
                for c, k in zip(sums.clusters, W[b], strict=True)
                for _ in range(int(k))
            ]
        )
        for m, name in enumerate(sums.labels):
            rows = picked[arr_m[picked] == name]
            assert reps[b, m] == pytest.approx(arr_s[rows].mean())


def test_closed_form_covariance_matches_bootstrap_at_c200() -> None:
    models, clusters, scores = _clustered(200, 3, 10, 0.3, seed=2)
    res = bootstrap_means(scores, clusters, models, B=10_000, seed=0)
    boot = np.asarray(res.covariance_bootstrap)
    closed = np.asarray(res.covariance_closed_form)
    # variances within 5% (MC error of a variance with B=10,000 is ~1.4%; C/(C-1) adds 0.5%)
    assert np.allclose(np.diag(boot), np.diag(closed), rtol=0.05)
    # covariances (positive through the shared conversation effect) within 5% of the variance
    scale = np.sqrt(np.outer(np.diag(closed), np.diag(closed)))
    assert np.all(np.abs(boot - closed) / scale < 0.05)
    assert np.allclose(
        cluster_robust_covariance(ClusterSums.from_long(models, clusters, scores)), closed
    )


def test_interval_of_a_mean_is_close_to_the_normal_interval() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=400)
    res = bootstrap_means(x, range(400), B=10_000, seed=1, method="bca").means[0]
    se = x.std(ddof=1) / np.sqrt(400)
    assert res.method == "bca"
    assert res.lower == pytest.approx(x.mean() - 1.96 * se, abs=0.15 * se)
    assert res.upper == pytest.approx(x.mean() + 1.96 * se, abs=0.15 * se)
    # Monte-Carlo error of an endpoint: small next to the standard error, shrinking with B
    assert res.mc_error_lower is not None and 0 < res.mc_error_lower < 0.1 * se
    small = bootstrap_means(x, range(400), B=500, seed=1, method="bca").means[0]
    assert small.mc_error_lower is not None and small.mc_error_lower > res.mc_error_lower


def test_bca_falls_back_to_percentile_on_constant_data_and_says_so() -> None:
    res = bootstrap_means([3.0] * 20, [i // 2 for i in range(20)], B=200, method="bca").means[0]
    assert res.requested_method == "bca"
    assert res.method == "percentile"
    assert (res.estimate, res.lower, res.upper) == (3.0, 3.0, 3.0)


def test_percentile_method_when_asked_and_endpoint_helper() -> None:
    reps = np.arange(1, 1001, dtype=float)
    ends = interval_endpoints(500.0, reps, method="percentile")
    assert ends.method == "percentile"
    assert ends.lower == pytest.approx(np.quantile(reps, 0.025))
    assert ends.upper == pytest.approx(np.quantile(reps, 0.975))
    undefined = interval_endpoints(500.0, np.array([np.nan, 1.0, 2.0]), method="percentile")
    assert undefined.n_undefined == 1


def test_paired_draws_shrink_the_interval_of_a_difference() -> None:
    # same conversation effect for both models: the paired difference has far less variance
    models, clusters, scores = _clustered(60, 2, 5, 0.6, seed=5)
    res = bootstrap_means(scores, clusters, models, B=2_000, seed=0)
    d = res.replicates[:, 1] - res.replicates[:, 0]
    var_sum = np.var(res.replicates[:, 0]) + np.var(res.replicates[:, 1])
    assert np.var(d) < 0.5 * var_sum


def test_result_serialises_to_json() -> None:
    models, clusters, scores = _clustered(10, 2, 2, 0.3, seed=6)
    res = bootstrap_means(scores, clusters, models, B=100)
    dumped = res.model_dump()
    assert set(dumped) >= {"labels", "means", "covariance_bootstrap", "covariance_closed_form"}
    assert res.model_dump_json()


cluster_data = st.lists(
    st.tuples(st.integers(0, 7), st.floats(-10, 10, allow_nan=False, allow_infinity=False)),
    min_size=6,
    max_size=40,
).filter(lambda rows: len({c for c, _ in rows}) >= 4)


@settings(max_examples=40, deadline=None)
@given(cluster_data)
def test_every_mean_interval_contains_its_estimate(rows: list[tuple[int, float]]) -> None:
    clusters = [c for c, _ in rows]
    values = [v for _, v in rows]
    for method in ("bca", "percentile"):
        m = bootstrap_means(values, clusters, B=400, seed=0, method=method).means[0]
        assert m.lower is not None and m.upper is not None and m.estimate is not None
        assert m.lower - 1e-9 <= m.estimate <= m.upper + 1e-9


@settings(max_examples=25, deadline=None)
@given(cluster_data, st.randoms(use_true_random=False))
def test_results_do_not_depend_on_row_order(rows: list[tuple[int, float]], rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    a = bootstrap_means([v for _, v in rows], [c for c, _ in rows], B=200)
    b = bootstrap_means([v for _, v in shuffled], [c for c, _ in shuffled], B=200)
    assert a.means[0].lower == pytest.approx(b.means[0].lower)
    assert a.means[0].upper == pytest.approx(b.means[0].upper)
    assert a.means[0].estimate == pytest.approx(b.means[0].estimate)


def test_paired_cluster_bootstrap_accepts_shared_weights() -> None:
    models, clusters, scores = _clustered(15, 2, 2, 0.3, seed=9)
    sums = ClusterSums.from_long(models, clusters, scores)
    W = bootstrap_weights(15, 300, seed=11)
    a = paired_cluster_bootstrap(sums, weights=W)
    assert np.array_equal(a.weights, W)
    assert a.B == 300


def test_label_without_observations_is_undefined_with_a_reason_and_no_warning() -> None:
    # label a: one value per cluster, 1, 2, 3 → mean 2; label b: a column of zero counts.
    sums = ClusterSums(
        clusters=["c1", "c2", "c3"],
        labels=["a", "b"],
        sums=np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]]),
        counts=np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = paired_cluster_bootstrap(sums, B=300, seed=4)
    a, b = res.means
    assert a.estimate == pytest.approx(2.0)
    assert b.estimate is None and b.lower is None and b.upper is None
    assert b.undefined_reason is not None and "'b'" in b.undefined_reason
    assert b.n == 0 and b.n_undefined_replicates == 300
    # closed form for a: u_c = (S_c − 2·1)/1 = −1, 0, 1 → UᵀU = 2, / (C(C−1) = 6) = 1/3
    assert res.covariance_closed_form[0][0] == pytest.approx(1 / 3)
    assert np.isnan(res.covariance_closed_form[1][1])
    assert np.isnan(res.covariance_closed_form[0][1])
    assert np.isfinite(res.covariance_bootstrap[0][0])
    assert np.isnan(res.covariance_bootstrap[1][1])


def test_label_missing_from_some_replicates_counts_them_as_undefined() -> None:
    # b is observed only in cluster c1: a replicate is undefined for b exactly when c1 gets
    # weight 0, which we count from the weights independently of the estimator.
    labels = ["a", "a", "a", "b"]
    clusters = ["c1", "c2", "c3", "c1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = bootstrap_means([1.0, 2.0, 3.0, 4.0], clusters, labels, B=400, seed=2)
    expected_undefined = int(np.sum(res.weights[:, 0] == 0))
    assert expected_undefined > 0
    assert res.means[1].n_undefined_replicates == expected_undefined
    assert res.means[1].estimate == pytest.approx(4.0)
    assert res.means[0].n_undefined_replicates == 0


def test_single_usable_replicate_gives_nan_covariance_without_warning() -> None:
    # B = 1: a covariance needs at least two replicates, so it is NaN (numpy would warn).
    # The estimate is the ratio 5 / 2 = 2.5.
    sums = ClusterSums(
        clusters=["c1"], labels=["a"], sums=np.array([[5.0]]), counts=np.array([[2.0]])
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = paired_cluster_bootstrap(sums, B=1, seed=0)
    assert res.means[0].estimate == pytest.approx(2.5)
    assert np.isnan(res.covariance_bootstrap[0][0])


def test_undefined_replicates_are_counted_and_too_many_withhold_the_interval() -> None:
    reps = np.arange(1000, dtype=float)
    some = reps.copy()
    some[:50] = np.nan  # 5%: reported, with the share in the note
    ends = interval_endpoints(500.0, some, method="percentile")
    assert ends.lower is not None and ends.n_undefined == 50
    assert ends.note == "50 of 1000 bootstrap replicates (5.0%) undefined and dropped"
    many = reps.copy()
    many[:340] = np.nan  # 34%: the interval would describe only the defined draws
    ends = interval_endpoints(500.0, many, method="percentile")
    assert (ends.lower, ends.upper, ends.method, ends.n_undefined) == (None, None, "none", 340)
    assert ends.note is not None and ends.note.startswith("no interval: the statistic is undefined")
    # BCa's fallback says why
    flat = interval_endpoints(3.0, np.full(100, 3.0), method="bca", jackknife=np.full(5, 3.0))
    assert flat.method == "percentile" and flat.note == (
        "BCa undefined (all replicates are equal): percentile interval; "
        "degenerate: zero-width interval (every resample gives the same value)"
    )
