"""Batched Bradley–Terry Newton fit: starts, warm-up, per-matrix stopping, edge cases.

Expected values come from an independent fit (SciPy BFGS on the penalised log-likelihood,
numerical gradient) or from hand computation.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from attune_judge.calibration import bradley_terry, fit_bradley_terry_batch, win_tables

# private unit: Bradley-Terry identifiability and the sandwich covariance
from attune_judge.calibration.ranking._bradley_terry import bt_identifiable
from attune_judge.calibration.ranking._bt_fit import bt_sandwich_covariance
from attune_judge.errors import UserError


def _independent_fit(W: np.ndarray, l2: float) -> np.ndarray:
    """SciPy BFGS (numerical gradient) on Σ_ij W_ij log(1 + e^{-(β_i − β_j)}) + l2/2 ||β||²."""

    def nll(b: np.ndarray) -> float:
        d = b[:, None] - b[None, :]
        return float(np.sum(W * np.logaddexp(0, -d)) + l2 / 2 * np.sum(b**2))

    res = optimize.minimize(nll, np.zeros(len(W)), method="BFGS", options={"gtol": 1e-10})
    return np.asarray(res.x - res.x.mean())


def _random_wins(rng: np.random.Generator, k: int, p: int, high: int = 20) -> np.ndarray:
    wins = rng.integers(0, high, size=(k, p, p)).astype(float)
    for m in range(k):
        np.fill_diagonal(wins[m], 0)
    return wins


@pytest.mark.parametrize("warm_steps", [0, 2])
@pytest.mark.parametrize("start", ["zeros", "shared", "per-matrix", "far"])
def test_every_start_reaches_the_independent_fit(start: str, warm_steps: int) -> None:
    rng = np.random.default_rng(11)
    wins = _random_wins(rng, 6, 6)
    starts = {
        "zeros": None,
        "shared": rng.normal(size=6),
        "per-matrix": rng.normal(size=(6, 6)),
        "far": np.full(6, 5.0) * np.array([1, -1, 1, -1, 1, -1]),
    }
    beta, conv = fit_bradley_terry_batch(wins, l2=0.01, start=starts[start], warm_steps=warm_steps)
    assert conv.all()
    for k in range(6):
        assert np.allclose(beta[k], _independent_fit(wins[k], 0.01), atol=1e-6)


def test_a_slow_matrix_does_not_disturb_the_others() -> None:
    # matrix 1 is separated (model 0 wins every comparison): it needs many more Newton steps
    # than the others; matrices stop one by one, and all must still match the independent fit
    rng = np.random.default_rng(5)
    wins = _random_wins(rng, 4, 4)
    wins[1] = np.triu(np.full((4, 4), 30.0), 1)  # i beats every j > i, never the reverse
    beta, conv = fit_bradley_terry_batch(wins, l2=0.01, start=np.zeros(4))
    assert conv.all()
    assert np.all(np.isfinite(beta))
    assert np.all(np.diff(beta[1]) < 0)  # the separated order is kept
    for k in range(4):
        assert np.allclose(beta[k], _independent_fit(wins[k], 0.01), atol=1e-6)


def test_converged_flag_is_honest() -> None:
    rng = np.random.default_rng(2)
    wins = _random_wins(rng, 3, 5)
    _, conv = fit_bradley_terry_batch(wins, l2=0.01, max_iter=1, warm_steps=0)
    assert not conv.any()  # one Newton step from zero is not below 1e-10
    _, conv = fit_bradley_terry_batch(wins, l2=0.01)
    assert conv.all()


def test_absent_model_is_nan_and_the_rest_is_the_reduced_fit() -> None:
    # model 2 has no comparison in matrix 0: β = NaN there; with the ridge its unpenalised
    # direction is pinned at 0 so the others equal the 2-model fit: β_a − β_b = log(7/3)
    # (tiny ridge), i.e. ±log(7/3)/2.
    wins = np.zeros((2, 3, 3))
    wins[0, 0, 1], wins[0, 1, 0] = 7.0, 3.0
    wins[1] = [[0, 4, 2], [1, 0, 3], [5, 2, 0]]
    beta, conv = fit_bradley_terry_batch(wins, l2=1e-9)
    assert conv.all()
    assert np.isnan(beta[0, 2])
    assert beta[0, 0] == pytest.approx(np.log(7 / 3) / 2, abs=1e-6)
    assert beta[0, 1] == pytest.approx(-np.log(7 / 3) / 2, abs=1e-6)
    assert np.allclose(beta[1], _independent_fit(wins[1], 1e-9), atol=1e-5)


def test_nan_start_counts_as_zero_and_input_is_left_alone() -> None:
    rng = np.random.default_rng(8)
    wins = _random_wins(rng, 3, 4)
    before = wins.copy()
    a, _ = fit_bradley_terry_batch(wins, start=np.array([np.nan, 0.3, np.nan, -0.1]))
    b, _ = fit_bradley_terry_batch(wins, start=np.array([0.0, 0.3, 0.0, -0.1]))
    assert np.array_equal(wins, before)
    assert np.allclose(a, b, atol=1e-12)


def test_bootstrap_sized_batch_matches_scipy_refits() -> None:
    # a batch like the benchmark's (many re-weighted copies of one table), warm-started from
    # the point estimate; a sample of replicates is checked against the independent fit
    rng = np.random.default_rng(4)
    clusters = _random_wins(rng, 40, 5, high=3)
    weights = rng.multinomial(40, np.full(40, 1 / 40), size=300).astype(float)
    wins = np.einsum("bc,cij->bij", weights, clusters)
    beta_hat, _ = fit_bradley_terry_batch(clusters.sum(0)[None])
    beta, conv = fit_bradley_terry_batch(wins, start=beta_hat[0])
    assert conv.all()
    for k in (0, 17, 123, 299):
        assert np.allclose(beta[k], _independent_fit(wins[k], 0.0), atol=1e-6)


def test_default_fit_is_the_unpenalised_mle() -> None:
    # two models: the MLE is exactly β_a − β_b = log(W_ab / W_ba) (no ridge bias)
    beta, conv = fit_bradley_terry_batch(np.array([[[0.0, 7.0], [3.0, 0.0]]]))
    assert conv.all()
    assert beta[0, 0] - beta[0, 1] == pytest.approx(np.log(7 / 3), abs=1e-10)
    # several models: the score equations Σ_j W_ij = Σ_j n_ij σ(β_i − β_j) hold exactly
    rng = np.random.default_rng(21)
    W = _random_wins(rng, 1, 6)[0]
    b, conv = fit_bradley_terry_batch(W[None])
    assert conv.all()
    n = W + W.T
    P = 1 / (1 + np.exp(-(b[0][:, None] - b[0][None, :])))
    assert np.allclose(W.sum(1), (n * P).sum(1), atol=1e-8)
    # the old default ridge (0.01) moves strengths by more than 1e-6 on the same data
    pen, _ = fit_bradley_terry_batch(W[None], l2=0.01)
    assert np.max(np.abs(pen - b)) > 1e-6


def test_l2_zero_on_separated_data_is_refused_by_name() -> None:
    a = ["x", "x", "y", "y", "x"]
    b = ["y", "z", "z", "z", "z"]
    w = ["A", "A", "A", "B", "A"]  # x never loses
    with pytest.raises(UserError, match=r"never lost or tied: \['x'\]"):
        bradley_terry(a, b, w, ["c1", "c2", "c3", "c4", "c5"], B=50)
    # the same data with a ridge is fitted, and says it is penalised
    res = bradley_terry(a, b, w, ["c1", "c2", "c3", "c4", "c5"], B=50, l2=0.1)
    assert res.note is not None and "penalised" in res.note
    # separated matrices inside a batch are NaN and not converged, the others are fitted
    wins = np.array([[[0.0, 3.0], [0.0, 0.0]], [[0.0, 3.0], [1.0, 0.0]]])
    assert bt_identifiable(wins).tolist() == [False, True]
    beta, conv = fit_bradley_terry_batch(wins)
    assert conv.tolist() == [False, True] and np.isnan(beta[0]).all()


def test_separated_and_unconverged_replicates_are_dropped_and_counted() -> None:
    # few comparisons per conversation: many resamples leave some model unbeaten
    rng = np.random.default_rng(2)
    a, b, w, c = [], [], [], []
    for conv in range(12):
        i, j = rng.choice(3, 2, replace=False)
        a.append(f"m{i}")
        b.append(f"m{j}")
        w.append("A" if rng.random() < 0.5 else "B")
        c.append(conv)
    a += ["m0", "m1", "m2"]
    b += ["m1", "m2", "m0"]
    w += ["A", "A", "A"]
    c += [20, 21, 22]
    res = bradley_terry(a, b, w, c, B=400)
    assert res.n_separated > 0
    assert res.n_used == 400 - res.n_separated - res.n_unconverged
    # m0 and m1 are compared in 10 and 12 conversations, m2 in 8: a dropped replicate is
    # undefined for all; m2 is also undefined where it was fitted out (it never lost or never
    # won there) without taking the others with it
    well = [m.n_clusters >= 10 for m in res.strengths]
    assert well == [True, True, False]
    for m, ok in zip(res.strengths, well, strict=True):
        assert (
            (m.n_undefined_replicates == 400 - res.n_used)
            if ok
            else (m.n_undefined_replicates > 400 - res.n_used)
        )
    assert res.note is not None and "dropped" in res.note
    assert np.isnan(res.replicates[:, :2]).any(axis=1).sum() == 400 - res.n_used


def _numerical_sandwich(T: np.ndarray, beta: np.ndarray, l2: float = 0.0) -> np.ndarray:
    """Independent sandwich: central-difference per-cluster scores and Hessian, pseudo-inverse.

    Objective of cluster c: Σ_ij T_c,ij log σ(β_i − β_j) − l2/(2C)·||β||² (the ridge shared
    equally by the clusters, so the per-cluster terms sum to the penalised log-likelihood).
    """
    C, p, _ = T.shape

    def ll(Tc: np.ndarray, b: np.ndarray, share: float = 1 / C) -> float:
        d = b[:, None] - b[None, :]
        return float(-np.sum(Tc * np.logaddexp(0, -d)) - share * l2 / 2 * np.sum(b * b))

    h = 1e-5
    eye = np.eye(p)
    scores = np.array(
        [
            [
                (ll(T[c], beta + h * eye[i]) - ll(T[c], beta - h * eye[i])) / (2 * h)
                for i in range(p)
            ]
            for c in range(C)
        ]
    )
    total = T.sum(0)

    def grad(b: np.ndarray) -> np.ndarray:
        return np.array(
            [
                (ll(total, b + h * eye[i], 1.0) - ll(total, b - h * eye[i], 1.0)) / (2 * h)
                for i in range(p)
            ]
        )

    H = -np.array(
        [(grad(beta + 1e-4 * eye[i]) - grad(beta - 1e-4 * eye[i])) / 2e-4 for i in range(p)]
    )
    # the likelihood is flat along 1 (only differences matter): project that direction out
    proj = np.eye(p) - 1 / p if l2 == 0 else np.eye(p)
    Hp = np.linalg.pinv(proj @ ((H + H.T) / 2) @ proj, rcond=1e-6)
    meat = C / (C - 1) * scores.T @ scores
    return np.asarray(Hp @ meat @ Hp)


def test_sandwich_covariance_matches_numerical_derivatives() -> None:
    rng = np.random.default_rng(31)
    T = _random_wins(rng, 12, 4, high=4)
    beta = _independent_fit(T.sum(0), 0.0)
    ours = bt_sandwich_covariance(T, np.ones((1, 12)), beta[None])[0]
    assert np.allclose(ours, _numerical_sandwich(T, beta), atol=1e-6)
    assert np.allclose(ours.sum(1), 0, atol=1e-10)  # covariance of strengths centred to 0
    # a bootstrap row of weights is the data with each drawn copy of a cluster as a cluster
    w = rng.multinomial(12, np.full(12, 1 / 12)).astype(float)
    expanded = np.repeat(T, w.astype(int), axis=0)
    b_w = _independent_fit(expanded.sum(0), 0.0)
    ours_w = bt_sandwich_covariance(T, w[None], b_w[None])[0]
    assert np.allclose(ours_w, _numerical_sandwich(expanded, b_w), atol=1e-6)
    # a ridge: the penalised estimating equation's sandwich (Hessian + l2·I)
    b_r = _independent_fit(T.sum(0), 0.5)
    ours_r = bt_sandwich_covariance(T, np.ones((1, 12)), b_r[None], l2=0.5)[0]
    assert np.allclose(ours_r, _numerical_sandwich(T, b_r, l2=0.5), atol=1e-6)


def test_sandwich_covariance_leaves_out_a_model_without_a_strength() -> None:
    # a row whose model 3 has no strength (absent from the resample, or fitted out of it):
    # its comparisons count for nobody, and the others' covariance is the numerical sandwich
    # of the data without model 3 (before: NaN throughout)
    rng = np.random.default_rng(32)
    T = _random_wins(rng, 12, 4, high=4)
    reduced = T[:, :3, :3]
    beta = _independent_fit(reduced.sum(0), 0.0)
    ours = bt_sandwich_covariance(T, np.ones((1, 12)), np.append(beta, np.nan)[None])[0]
    assert np.allclose(ours[:3, :3], _numerical_sandwich(reduced, beta), atol=1e-6)
    assert np.isnan(ours[3]).all() and np.isnan(ours[:, 3]).all()


def test_strength_intervals_and_rank_sets_are_studentized() -> None:
    # 3 models, 12 conversations; the studentized interval is β̂ ± q·SE with SE from the
    # sandwich covariance, and rank sets take their critical values from the bootstrap
    rng = np.random.default_rng(9)
    a, b, w, c = [], [], [], []
    for conv in range(12):
        for _ in range(6):
            i, j = rng.choice(3, 2, replace=False)
            a.append(f"m{i}")
            b.append(f"m{j}")
            w.append("A" if rng.random() < 1 / (1 + np.exp(-(j - i))) else "B")
            c.append(conv)
    res = bradley_terry(a, b, w, c, B=300)
    T = win_tables(a, b, w, c)[2]
    assert np.allclose(
        res.covariance, _numerical_sandwich(T, _independent_fit(T.sum(0), 0.0)), atol=1e-6
    )
    for m, st in enumerate(res.strengths):
        assert st.method == "studentized"
        assert st.estimate is not None and st.lower is not None and st.upper is not None
        se = np.sqrt(res.covariance[m][m])
        assert (st.upper - st.estimate) == pytest.approx(st.estimate - st.lower)  # symmetric
        assert 1.5 < (st.upper - st.estimate) / se < 4  # a t-like multiplier, not a percentile
    assert res.rank_claims and not res.warnings
    assert res.rank_sets_simultaneous.critical_values_from == "studentized_bootstrap"


def test_no_rank_claims_below_the_minimum_number_of_conversations() -> None:
    a = ["x", "y", "z"] * 6
    b = ["y", "z", "x"] * 6
    w = ["A", "A", "A", "B", "B", "B"] * 3
    c = [i % 6 for i in range(18)]
    res = bradley_terry(a, b, w, c, B=200)
    assert not res.rank_claims
    assert res.rank_sets_simultaneous.lower == [1, 1, 1]
    assert res.rank_sets_simultaneous.upper == [3, 3, 3]
    assert res.warnings and "only 6 conversations" in res.warnings[0]
