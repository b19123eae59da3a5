"""PPI++ leaderboards: exactness against the closed-form PPI/PPI++ formulas, coverage by
simulation, and the join of judgments with human labels.

The closed forms are written out here independently (Angelopoulos et al., Science 2023 for
classical PPI; Angelopoulos, Duchi & Zrnic 2023 "PPI++" for the power-tuned λ), with the
variance convention of the authors' ``ppi_py`` code (``np.std``, divisor n).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from attune_judge.calibration import (
    ppi_columns,
    ppi_leaderboard,
    ppi_leaderboard_markdown,
    ppi_plus_mean,
)
from attune_judge.data import Judgment, Rating
from attune_judge.errors import UserError


def _iid(seed: int = 3, n: int = 60, N: int = 500) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.normal(3.0, 1.0, n)
    f_lab = 0.7 * y + 1.2 + rng.normal(0, 0.6, n)
    y_unl = rng.normal(3.0, 1.0, N)
    f_unl = 0.7 * y_unl + 1.2 + rng.normal(0, 0.6, N)
    return y, f_lab, f_unl


def _run(y, f_lab, f_unl, **kw):  # type: ignore[no-untyped-def]
    judge = np.concatenate([f_lab, f_unl])
    human = list(y) + [None] * len(f_unl)
    return ppi_plus_mean(judge, human, small_sample=False, **kw)


def test_classical_ppi_matches_closed_form() -> None:
    y, fl, fu = _iid()
    n, N = len(y), len(fu)
    est, lam = _run(y, fl, fu, lam=1.0)
    theta = fu.mean() + (y - fl).mean()
    se = np.sqrt(np.var(fu) / N + np.var(y - fl) / n)
    z = stats.norm.ppf(0.975)
    assert lam == 1.0
    assert est.estimate == pytest.approx(theta, rel=1e-12)
    assert est.se == pytest.approx(se, rel=1e-12)
    assert est.lower == pytest.approx(theta - z * se, rel=1e-12)
    assert est.upper == pytest.approx(theta + z * se, rel=1e-12)


def test_power_tuned_lambda_matches_closed_form() -> None:
    y, fl, fu = _iid(seed=11)
    n, N = len(y), len(fu)
    est, lam = _run(y, fl, fu)
    cov = np.mean((y - y.mean()) * (fl - fl.mean()))
    lam_hat = (cov / n) / (np.var(fl) / n + np.var(fu) / N)
    theta = y.mean() + lam_hat * (fu.mean() - fl.mean())
    se = np.sqrt(np.var(y - lam_hat * fl) / n + lam_hat**2 * np.var(fu) / N)
    assert lam == pytest.approx(lam_hat, rel=1e-12)
    assert est.estimate == pytest.approx(theta, rel=1e-12)
    assert est.se == pytest.approx(se, rel=1e-12)
    # PPI++ with the judge's variance pooled over both sets (ppi_py) is close, not equal
    pooled = cov / ((1 + n / N) * np.var(np.concatenate([fl, fu]), ddof=1))
    assert lam == pytest.approx(pooled, rel=0.1)
    # the tuned λ is never worse than human-only (λ=0) or classical PPI (λ=1)
    for fixed in (0.0, 1.0):
        assert est.se is not None
        other = _run(y, fl, fu, lam=fixed)[0]
        assert other.se is not None and est.se <= other.se + 1e-15


def test_lambda_zero_is_the_human_mean_and_clip_bounds_lambda() -> None:
    y, fl, fu = _iid(seed=5)
    est, _ = _run(y, fl, fu, lam=0.0)
    assert est.estimate == pytest.approx(y.mean(), rel=1e-12)
    assert est.se == pytest.approx(np.std(y) / np.sqrt(len(y)), rel=1e-12)
    # a judge scaled ×10 wants λ ≈ 0.07; clipped to [0.5, 1] it is 0.5
    _, lam = _run(y, 10 * fl, 10 * fu, clip=(0.5, 1.0))
    assert lam == 0.5


def test_cluster_se_matches_an_independent_cluster_bootstrap() -> None:
    rng = np.random.default_rng(7)
    C, k = 120, 5
    cl = np.repeat(np.arange(C), k)
    u = np.repeat(rng.normal(0, 0.8, C), k)
    y = 2 + u + rng.normal(0, 1, C * k)
    f = y + 0.5 + rng.normal(0, 0.7, C * k)
    labelled = np.repeat(rng.random(C) < 0.3, k)
    human = [float(v) if lab else None for v, lab in zip(y, labelled, strict=True)]
    est, used = ppi_plus_mean(f, human, cl, lam=0.8, small_sample=False)
    assert used == 0.8
    reps = []
    for _ in range(2000):
        pick = rng.integers(0, C, C)
        idx = np.concatenate([np.flatnonzero(cl == c) for c in pick])
        lab = labelled[idx]
        yl, fl, fu = y[idx][lab], f[idx][lab], f[idx][~lab]
        reps.append(yl.mean() + 0.8 * (fu.mean() - fl.mean()))
    assert est.se == pytest.approx(np.std(reps), rel=0.08)


def _simulate(rng: np.random.Generator, C: int = 60, turns: int = 3):  # type: ignore[no-untyped-def]
    mu = {"a": 0.60, "b": 0.55, "c": 0.40}
    bias = {"a": 0.10, "b": -0.05, "c": 0.0}
    models, clusters, judge, human = [], [], [], []
    lab_conv = rng.random(C) < 0.3
    for c in range(C):
        u = rng.normal(0, 0.08)
        for _t in range(turns):
            for m in mu:
                y = mu[m] + u + rng.normal(0, 0.15)
                f = 0.8 * y + 0.1 + bias[m] + rng.normal(0, 0.08)
                models.append(m)
                clusters.append(c)
                judge.append(f)
                human.append(y if lab_conv[c] else None)
    return mu, models, clusters, judge, human


def test_ppi_intervals_cover_at_the_nominal_rate() -> None:
    rng = np.random.default_rng(2024)
    reps = 600
    hit_mean = hit_diff = total_mean = total_diff = 0
    judge_only_hits = 0
    for _ in range(reps):
        mu, *cols = _simulate(rng)
        board = ppi_leaderboard(*cols)
        for row in board.rows:
            assert row.ppi.lower is not None and row.ppi.upper is not None
            hit_mean += row.ppi.lower <= mu[row.model] <= row.ppi.upper
            total_mean += 1
            jo = row.judge_only
            assert jo.lower is not None and jo.upper is not None
            judge_only_hits += jo.lower <= mu[row.model] <= jo.upper
        for d in board.differences:
            assert d.ppi.lower is not None and d.ppi.upper is not None
            truth = mu[d.model_a] - mu[d.model_b]
            hit_diff += d.ppi.lower <= truth <= d.ppi.upper
            total_diff += 1
    assert 0.93 <= hit_mean / total_mean <= 0.97
    assert 0.93 <= hit_diff / total_diff <= 0.97
    # the biased judge alone is not a valid interval for the human mean
    assert judge_only_hits / total_mean < 0.5


def test_a_good_judge_gains_effective_sample_size_and_a_noise_judge_does_not() -> None:
    rng = np.random.default_rng(1)
    _, models, clusters, judge, human = _simulate(rng, C=150)
    good = ppi_leaderboard(models, clusters, judge, human)
    assert all(r.ess_gain is not None and r.ess_gain > 1.5 for r in good.rows)
    assert all(
        r.ppi.se is not None and r.human_only.se is not None and r.ppi.se < r.human_only.se
        for r in good.rows
    )
    noise = list(rng.normal(size=len(judge)))
    bad = ppi_leaderboard(models, clusters, noise, human)
    assert all(r.ess_gain is not None and r.ess_gain < 1.1 for r in bad.rows)
    assert [d.model_a for d in good.differences][:2] == [good.rows[0].model] * 2


def test_bad_input_is_a_user_error() -> None:
    with pytest.raises(UserError, match="human-labelled"):
        ppi_leaderboard(["a", "a"], [1, 2], [0.1, 0.2], [None, None])
    with pytest.raises(UserError, match="same length"):
        ppi_leaderboard(["a"], [1, 2], [0.1, 0.2], [None, 1.0])


def test_ppi_columns_joins_and_rescales_humans() -> None:
    js = [
        Judgment(
            item_id="i1",
            judge_id="j",
            conversation_id="c1",
            candidate_model="m",
            normalized=0.5,
            overall=3.0,
        ),
        Judgment(
            item_id="i2",
            judge_id="j",
            conversation_id="c1",
            candidate_model="m",
            normalized=0.75,
            overall=4.0,
        ),
        Judgment(
            item_id="i3",
            judge_id="j",
            conversation_id="c2",
            candidate_model="m",
            status="parse_error",
        ),
    ]
    rs = [
        Rating(item_id="i1", rater="p1", value=5),
        Rating(item_id="i1", rater="p2", value=3),
        Rating(item_id="i9", rater="p1", value=1),
        Rating(item_id="i2", rater="p1", dimension="other", value=1),
    ]
    cols = ppi_columns(js, rs, dimension="overall", human_scale=(1, 5))
    assert cols.models == ["m", "m"]
    assert cols.human == [pytest.approx(0.75), None]
    assert cols.n_human_items == 2 and cols.n_matched == 1
    assert cols.unmatched_examples == ["i9"]
    with pytest.raises(UserError, match="no human label"):
        ppi_columns(js, rs, dimension="empathy")


def _two_models(labelled: set[int]) -> tuple[list[str], list[str], list[float], list[float | None]]:
    """30 conversations; human means 4 and 1, labelled in the given conversations."""
    models, clusters, judge, human = [], [], [], []
    for c in range(30):
        for m, mu, k in (("good", 4.0, 7), ("poor", 1.0, 3)):
            models.append(m)
            clusters.append(f"c{c}")
            judge.append(mu + 0.1 * (c % 3))
            human.append(mu + 0.3 * float(np.sin(c * k)) if c in labelled else None)
    return models, clusters, judge, human


def test_few_labelled_conversations_warn_and_make_no_pairwise_claim() -> None:
    # labelled in 6 conversations the interval of the difference excludes 0, but below
    # MIN_CLUSTERS no pair is called distinguishable, and the table says why
    few = ppi_leaderboard(*_two_models({0, 5, 10, 15, 20, 25}))
    assert few.n_labelled_clusters == 6 and not few.rank_claims
    assert few.warnings and "only 6 human-labelled conversations" in few.warnings[0]
    (d,) = few.differences
    assert d.ppi.lower is not None and d.ppi.lower > 0 and not d.distinguishable
    assert "> **Warning:** only 6 human-labelled conversations" in ppi_leaderboard_markdown(few)
    # labelled in 10 conversations the same gap is a claim, without a warning
    ten = ppi_leaderboard(*_two_models(set(range(0, 30, 3))))
    assert ten.n_labelled_clusters == 10 and ten.rank_claims and ten.warnings == []
    assert ten.differences[0].distinguishable
