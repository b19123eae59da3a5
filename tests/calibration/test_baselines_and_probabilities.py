"""Baseline agreement (paired cluster bootstrap) and probability scores, checked independently."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from attune_judge.calibration import (
    baseline_agreement,
    binary_brier_score,
    bootstrap_weights,
    brier_score,
    expected_calibration_error,
    probability_scores,
    weighted_spearman,
)
from attune_judge.errors import UserError


def _data(n: int = 30, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    judge = human + rng.normal(0, 1.0, n)
    length = rng.normal(0, 1, n)
    clusters = [f"c{i // 2}" for i in range(n)]  # two items per conversation
    return human, judge, length, clusters


def test_estimates_equal_scipy_spearman_and_their_difference() -> None:
    human, judge, length, clusters = _data()
    res = baseline_agreement(human, judge, {"length": length}, clusters=clusters, B=200)
    rho_j = stats.spearmanr(judge, human).statistic
    rho_l = stats.spearmanr(length, human).statistic
    assert res.spearman["judge"].estimate == pytest.approx(rho_j, abs=1e-12)
    assert res.spearman["length"].estimate == pytest.approx(rho_l, abs=1e-12)
    assert res.difference["length"].estimate == pytest.approx(rho_j - rho_l, abs=1e-12)
    assert res.n == 30 and res.n_clusters == 15


def test_difference_interval_matches_an_independent_resampling_loop() -> None:
    # the same cluster draws, expanded into an explicit resample and scored with scipy
    human, judge, length, clusters = _data()
    B, seed = 300, 7
    res = baseline_agreement(human, judge, {"length": length}, clusters=clusters, B=B, seed=seed)
    names = sorted(set(clusters))
    W = bootstrap_weights(len(names), B, seed)
    diffs = []
    for w in W:
        idx = [i for i, c in enumerate(clusters) for _ in range(int(w[names.index(c)]))]
        h, j, ln = human[idx], judge[idx], length[idx]
        diffs.append(stats.spearmanr(j, h).statistic - stats.spearmanr(ln, h).statistic)
    lower, upper = np.percentile(diffs, [2.5, 97.5])
    metric = res.difference["length"]
    assert metric.method == "percentile"
    assert metric.lower == pytest.approx(lower, abs=1e-9)
    assert metric.upper == pytest.approx(upper, abs=1e-9)


def test_weighted_spearman_counts_a_doubled_item_twice() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([2.0, 1.0, 4.0, 3.0])
    w = np.array([[2.0, 1.0, 1.0, 0.0]])
    expanded = stats.spearmanr([1, 1, 2, 3], [2, 2, 1, 4]).statistic
    assert weighted_spearman(x, y, w)[0] == pytest.approx(expanded)


def test_a_constant_judge_is_undefined_not_zero() -> None:
    human, _, length, clusters = _data()
    res = baseline_agreement(
        human, np.full(len(human), 3.0), {"length": length}, clusters=clusters, B=100
    )
    assert res.spearman["judge"].estimate is None
    assert res.difference["length"].estimate is None
    assert any("undefined" in line for line in res.lines())


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="one value per item"):
        baseline_agreement([1, 2, 3], [1, 2], {}, clusters=["a", "b", "c"])


def test_brier_score_hand_values_and_bounds() -> None:
    # perfect forecasts score 0; uniform over K = 4 levels scores 1 - 1/4 = 0.75
    assert brier_score([[1, 0, 0, 0], [0, 0, 1, 0]], [0, 2]) == 0.0
    assert brier_score([[0.25] * 4] * 3, [0, 1, 3]) == pytest.approx(0.75)
    # (0.7,0.2,0.1) label 0: 0.09+0.04+0.01 = 0.14; (0.2,0.5,0.3) label 2: 0.04+0.25+0.49 = 0.78
    assert brier_score([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]], [0, 2]) == pytest.approx(0.46)
    # binary form: (0.9-1)^2, (0.2-0)^2, (0.5-0)^2 -> (0.01 + 0.04 + 0.25) / 3 = 0.1
    assert binary_brier_score([0.9, 0.2, 0.5], [1, 0, 0]) == pytest.approx(0.1)
    # on two levels the multi-category form is twice the binary one
    assert brier_score([[0.1, 0.9], [0.8, 0.2]], [1, 0]) == pytest.approx(
        2 * binary_brier_score([0.9, 0.2], [1, 0])
    )


def test_ece_matches_a_loop_over_items_and_is_zero_when_calibrated() -> None:
    rng = np.random.default_rng(3)
    p = rng.dirichlet([1, 1, 1], size=200)
    y = rng.integers(0, 3, 200)
    bins = 10
    total = 0.0
    for b in range(bins):
        members = [
            i for i in range(200) if min(int(p[i].max() * bins), bins - 1) == b
        ]  # independent: per-item loop
        if members:
            acc = np.mean([p[i].argmax() == y[i] for i in members])
            conf = np.mean([p[i].max() for i in members])
            total += len(members) / 200 * abs(acc - conf)
    assert expected_calibration_error(p, y, bins=bins) == pytest.approx(total)
    # confidence 0.75 and right 3 times in 4: calibrated
    q = [[0.75, 0.25]] * 4
    assert expected_calibration_error(q, [0, 0, 0, 1]) == pytest.approx(0.0)


def test_probability_scores_skip_labels_between_levels() -> None:
    dists = [{"1": 0.5, "2": 0.5}, {"1": 1.0, "2": 0.0}, None]
    res = probability_scores(dists, [2.0, 1.5, 1.0], levels=[1, 2])
    # only the first item is scored: (0.5-0)^2 + (0.5-1)^2 = 0.5
    assert (res.n, res.n_skipped) == (1, 2)
    assert res.brier == pytest.approx(0.5)


def test_every_brier_and_ece_entry_point_gives_one_answer_for_the_same_forecasts() -> None:
    """One implementation: the point helpers, ``probability_scores`` and
    ``probability_calibration`` agree on the same forecasts, in both conventions; the binary
    convention is checked against a written-out calibration_curve-style loop."""
    from attune_judge.calibration import probability_calibration

    rng = np.random.default_rng(11)
    p = rng.uniform(0, 1, 300)
    y = (rng.uniform(0, 1, 300) < p**1.5).astype(int)  # miscalibrated on purpose
    # binary convention (a vector of P(y = 1)): bins of p, |observed rate - mean forecast|
    ece_loop = 0.0
    for b in range(10):
        lo, hi = b / 10, (b + 1) / 10
        sel = [i for i in range(300) if (lo < p[i] <= hi) or (b == 0 and p[i] == 0.0)]
        if sel:
            ece_loop += len(sel) / 300 * abs(np.mean(y[sel]) - np.mean(p[sel]))
    brier_ref = float(np.mean((p - y) ** 2))  # sklearn's brier_score_loss
    cal = probability_calibration(p, y, B=50)
    for value in (binary_brier_score(p, y), brier_score(p, y), cal.brier.estimate):
        assert value == pytest.approx(brier_ref, abs=1e-12)
    for value in (expected_calibration_error(p, y), cal.ece.estimate):
        assert value == pytest.approx(ece_loop, abs=1e-12)
    # the multi-class reading of the same forecasts: two columns, top-label ECE, Brier x 2
    P = np.column_stack([1 - p, p])
    dists = [{"0": float(a), "1": float(b)} for a, b in P]
    scores = probability_scores(dists, [float(v) for v in y], levels=[0, 1])
    cal2 = probability_calibration(P, y, B=50)
    for value in (brier_score(P, y), scores.brier, cal2.brier.estimate):
        assert value == pytest.approx(2 * brier_ref, abs=1e-12)
    conf = P.max(1)
    hit = (P.argmax(1) == y).astype(float)
    top = sum(
        np.mean(sel) * abs(hit[sel].mean() - conf[sel].mean())
        for b in range(10)
        if (sel := (conf > b / 10) & (conf <= (b + 1) / 10)).any()
    )
    for value in (expected_calibration_error(P, y), scores.ece, cal2.ece.estimate):
        assert value == pytest.approx(top, abs=1e-12)
    assert abs(top - ece_loop) > 1e-3  # the two conventions really differ on these forecasts
    with pytest.raises(UserError, match="vector"):
        binary_brier_score(P, y)
