"""Rank confidence sets, rank probabilities, Bradley–Terry, Kendall τ / W, the leaderboard."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from attune_judge.calibration import (
    ClusterSums,
    bradley_terry,
    fit_bradley_terry_batch,
    kendall_tau_rankings,
    kendalls_w,
    leaderboard,
    leaderboard_markdown,
    rank_confidence_sets,
    ranks_of,
)

# private unit: the rank-set kernels (critical values, rank probabilities)
from attune_judge.calibration.ranking._ranksets import (
    arena_rank_upper_bound,
    rank_probabilities,
    simulate_max_critical_value,
)
from attune_judge.errors import UserError


def test_single_step_simultaneous_critical_value_is_tukey_hsd() -> None:
    # Σ = s²I, all ordered pairs: max (Z_j − Z_k)/(s√2) is the studentized range / √2.
    # Independent value: SciPy's studentized range quantile (2.8497 for p = 6).
    # With 200,000 draws the simulated quantile has a standard error of ~0.005 (seen across
    # seeds); tolerance 0.02 is four standard errors.
    expected = stats.studentized_range.ppf(0.95, 6, np.inf) / np.sqrt(2)
    assert expected == pytest.approx(2.8497, abs=1e-4)
    c = simulate_max_critical_value(np.eye(6) * 4.0, n_draws=200_000, seed=1)
    assert c == pytest.approx(expected, abs=0.02)
    sets = rank_confidence_sets(np.zeros(6), np.eye(6), stepdown=False, n_draws=200_000, seed=1)
    assert sets.critical_values[0][0] == pytest.approx(expected, abs=0.02)


def test_rank_sets_separate_clear_winners_and_keep_ties_together() -> None:
    # models 0 and 1 are 100 standard errors apart; 1 and 2 are identical
    theta = np.array([10.0, 0.0, 0.0])
    cov = np.eye(3) * 0.01
    for kind in ("simultaneous", "marginal"):
        s = rank_confidence_sets(theta, cov, ["a", "b", "c"], kind=kind, n_draws=20_000)  # type: ignore[arg-type]
        assert (s.lower, s.upper) == ([1, 2, 2], [1, 3, 3])


def test_marginal_sets_are_never_wider_than_simultaneous() -> None:
    rng = np.random.default_rng(0)
    theta = np.sort(rng.normal(scale=0.3, size=8))
    A = rng.normal(size=(8, 8)) * 0.05
    cov = A @ A.T + np.eye(8) * 0.01
    sim = rank_confidence_sets(theta, cov, n_draws=20_000)
    mar = rank_confidence_sets(theta, cov, kind="marginal", n_draws=20_000)
    for j in range(8):
        assert sim.lower[j] <= mar.lower[j] <= mar.upper[j] <= sim.upper[j]
        assert mar.lower[j] <= int(ranks_of(theta)[j]) <= mar.upper[j]


def test_ranks_of_gives_ties_the_better_rank() -> None:
    assert ranks_of(np.array([0.5, 0.9, 0.5, 0.1])).tolist() == [2, 1, 2, 4]


def test_arena_upper_bound_by_hand() -> None:
    # intervals: a [5, 6], b [1, 4.5], c [4, 7]
    # a: no other lower (1, 4) exceeds its upper 6 → 1
    # b: a's lower 5 > 4.5, c's lower 4 is not → 2;  c: no lower exceeds 7 → 1
    assert arena_rank_upper_bound([5, 1, 4], [6, 4.5, 7]) == [1, 2, 1]
    # b's upper 3.5: both a (5) and c (4) are surely better → 3
    assert arena_rank_upper_bound([5, 1, 4], [6, 3.5, 7]) == [1, 3, 1]


def test_rank_probabilities_from_replicates() -> None:
    reps = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [2.0, 3.0, 1.0]])
    pr = rank_probabilities(reps, ["a", "b", "c"])
    # ranks: a = 1, 3, 1, 2; b = 2, 2, 3, 1; c = 3, 1, 2, 3
    assert pr.p_rank_1 == [0.5, 0.25, 0.25]
    assert pr.p_rank_at_most[0] == [0.5, 0.75, 1.0]


def _bt_loglik_fit(W: np.ndarray, l2: float) -> np.ndarray:
    """Independent fit: scipy BFGS on the penalised Bradley–Terry log-likelihood."""
    p = W.shape[0]

    def nll(b: np.ndarray) -> float:
        d = b[:, None] - b[None, :]
        return float(np.sum(W * np.logaddexp(0, -d)) + l2 / 2 * np.sum(b**2))

    res = optimize.minimize(nll, np.zeros(p), method="BFGS", options={"gtol": 1e-10})
    return np.asarray(res.x - res.x.mean())


def test_batched_newton_matches_scipy_refits() -> None:
    rng = np.random.default_rng(3)
    wins = rng.integers(0, 20, size=(4, 5, 5)).astype(float)
    for k in range(4):
        np.fill_diagonal(wins[k], 0)
    beta, conv = fit_bradley_terry_batch(wins, l2=0.01)
    assert conv.all()
    for k in range(4):
        assert np.allclose(beta[k], _bt_loglik_fit(wins[k], 0.01), atol=1e-5)


def test_bradley_terry_two_models_by_hand() -> None:
    # a beats b 2 times, b beats a once, one tie → a has 2.5 wins, b 1.5:
    # MLE β_a − β_b = log(2.5/1.5) (tiny ridge)
    beta, _ = fit_bradley_terry_batch(np.array([[[0.0, 2.5], [1.5, 0.0]]]), l2=1e-9)
    assert beta[0, 0] - beta[0, 1] == pytest.approx(np.log(2.5 / 1.5), abs=1e-6)
    res = bradley_terry(
        ["a", "a", "b", "a"],
        ["b", "b", "a", "b"],
        ["A", "A", "A", "tie"],
        ["c1", "c2", "c3", "c4"],
        B=200,
        l2=1e-9,
    )
    st = {m.name: m.estimate for m in res.strengths}
    assert st["bt_strength[a]"] - st["bt_strength[b]"] == pytest.approx(np.log(2.5 / 1.5), abs=1e-6)
    assert res.ties == "half"


def test_bradley_terry_bootstrap_recovers_the_order() -> None:
    rng = np.random.default_rng(1)
    s = np.array([-1.0, 0.0, 1.0])
    a, b, w, c = [], [], [], []
    for conv in range(150):
        for _ in range(4):
            i, j = rng.choice(3, 2, replace=False)
            a.append(f"m{i}")
            b.append(f"m{j}")
            w.append("A" if rng.random() < 1 / (1 + np.exp(s[j] - s[i])) else "B")
            c.append(conv)
    res = bradley_terry(a, b, w, c, B=300)
    assert res.rank_sets_simultaneous.lower == [3, 2, 1]
    assert res.rank_sets_simultaneous.upper == [3, 2, 1]
    for m in res.strengths:
        assert m.lower is not None and m.upper is not None and m.estimate is not None
        assert m.lower <= m.estimate <= m.upper
    assert res.model_dump_json()


def test_bradley_terry_rejects_bad_winner() -> None:
    with pytest.raises(UserError, match="winner must be"):
        bradley_terry(["a"], ["b"], ["left"], ["c"])


def test_kendalls_w_by_hand() -> None:
    # three identical rankings → W = 1; two reversed rankings → W = 0
    assert kendalls_w([[1, 2, 3], [1, 2, 3], [1, 2, 3]]).w == pytest.approx(1.0)
    assert kendalls_w([[1, 2, 3, 4], [4, 3, 2, 1]]).w == pytest.approx(0.0)
    # m = 2, n = 3, rankings (1,2,3) and (1,3,2): rank sums 2, 5, 5; mean 4;
    # S = 4 + 1 + 1 = 6; W = 12·6 / (4·(27 − 3)) = 0.75
    assert kendalls_w([[1, 2, 3], [1, 3, 2]]).w == pytest.approx(0.75)


def test_kendall_tau_between_rankings() -> None:
    rng = np.random.default_rng(2)
    m, cl, sc = [], [], []
    for c in range(40):
        for k in range(5):
            m.append(f"m{k}")
            cl.append(c)
            sc.append(k + rng.normal(scale=0.5))
    a = ClusterSums.from_long(m, cl, sc)
    same = kendall_tau_rankings(a, a, B=300)
    assert same.estimate == pytest.approx(1.0)
    rev = ClusterSums.from_long(m, cl, [-x for x in sc])
    assert kendall_tau_rankings(a, rev, B=300).estimate == pytest.approx(-1.0)


def test_leaderboard_has_everything_and_serialises() -> None:
    rng = np.random.default_rng(5)
    m, cl, sc = [], [], []
    for c in range(30):
        u = rng.normal(scale=0.5)
        for k, mu in enumerate([0.0, 0.05, 1.0]):
            for _ in range(3):
                m.append(f"model{k}")
                cl.append(f"conv{c}")
                sc.append(mu + u + rng.normal(scale=0.3))
    lb = leaderboard(m, cl, sc, B=1_000, n_draws=10_000)
    assert next(r.model for r in lb.rows) == "model2"
    top = lb.rows[0]
    assert top.rank_set_simultaneous == (1, 1)
    assert top.p_rank_1 == pytest.approx(1.0)
    for r in lb.rows:
        lo, hi = r.rank_set_simultaneous
        assert lo <= r.rank <= hi
        assert r.score.lower is not None and r.score.upper is not None
    dumped = lb.model_dump()
    assert dumped["rows"][0]["score"]["B"] == 1_000
    assert lb.tiers[0] == ["model2"]


def test_leaderboard_needs_two_clusters() -> None:
    with pytest.raises(UserError, match="at least two clusters"):
        leaderboard(["a", "b"], ["c", "c"], [1.0, 2.0], B=10)


def test_no_rank_claims_below_the_minimum_number_of_conversations() -> None:
    from attune_judge.calibration import MIN_CLUSTERS

    # two conversations, models far apart: still no rank set narrower than [1, p]
    lb = leaderboard(["a", "b", "a", "b"], ["c1", "c1", "c2", "c2"], [1.0, 0.0, 0.9, 0.1], B=200)
    assert not lb.rank_claims and lb.tiers == [["a", "b"]]
    assert [r.rank_set_simultaneous for r in lb.rows] == [(1, 2), (1, 2)]
    assert lb.warnings and f"below {MIN_CLUSTERS}" in lb.warnings[0]
    md = leaderboard_markdown(lb)
    assert "**Warning:** only 2 conversations" in md and "No tiers" in md


def test_p_rank_1_splits_ties_and_sums_to_one() -> None:
    from attune_judge.calibration.ranking._ranksets import rank_probabilities

    reps = np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    pr = rank_probabilities(reps, ["a", "b", "c"])
    # ties for first: replicate 1 (a, b), replicate 3 (a, b, c)
    assert pr.p_rank_1 == pytest.approx([(0.5 + 1 + 1 / 3) / 4, (0.5 + 1 / 3 + 1) / 4, (1 / 3) / 4])
    assert sum(pr.p_rank_1) == pytest.approx(1.0)
    assert pr.p_rank_1_or_tied == pytest.approx([0.75, 0.75, 0.25])
    assert pr.p_tie_at_top == pytest.approx(0.5)


def test_tied_models_form_a_tier_with_an_explanation() -> None:
    rng = np.random.default_rng(0)
    m, cl, sc = [], [], []
    for c in range(30):
        u = rng.normal()
        for name, mu in (("top", 1.0), ("x", 0.0), ("y", 0.0)):
            for _ in range(3):
                m.append(name)
                cl.append(c)
                sc.append(mu + u + rng.normal(0, 0.3))
    lb = leaderboard(m, cl, sc, B=1000)
    assert lb.rank_claims and lb.tiers[0] == ["top"] and sorted(lb.tiers[1]) == ["x", "y"]
    assert "cannot be ordered at 95%" in leaderboard_markdown(lb)
