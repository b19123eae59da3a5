"""Preference agreement, score-pair verdicts, position and length bias."""

from __future__ import annotations

import numpy as np
import pytest

from attune_judge.calibration import (
    judge_preferences_from_scores,
    length_effect,
    position_bias,
    preference_agreement,
    preference_markdown,
)
from attune_judge.data import Preference


def _p(
    item: str,
    winner: str | None,
    rater: str = "participant",
    q: str = "general",
    a: str = "original",
    b: str = "human_edited",
    cluster: str = "c1",
) -> Preference:
    return Preference(
        item_id=item,
        option_a=a,
        option_b=b,
        winner=winner,
        rater=rater,
        question=q,
        cluster=cluster,
        metadata={"conversation_id": cluster, "turn": 1},
    )


def test_scores_to_verdict_with_margin() -> None:
    def verdict(a: float, b: float, margin: float = 0.0) -> str | None:
        # the judge's scores of the two replies the participant compared (c1, turn 1)
        scores = {"c1:1:original": a, "c1:1:human_edited": b}
        (made,) = judge_preferences_from_scores([_p("i1", "A")], scores, margin=margin)
        return made.winner

    assert verdict(0.8, 0.5) == "A"
    assert verdict(0.5, 0.8) == "B"
    assert verdict(0.55, 0.5, margin=0.1) == "tie"
    assert verdict(0.5, 0.5) == "tie"


def test_tie_policies_by_hand() -> None:
    human = [
        _p("i1", "A", cluster="c1"),
        _p("i2", "B", cluster="c2"),
        _p("i3", "tie", cluster="c3"),
        _p("i4", "A", cluster="c4"),
    ]
    judge = [
        _p("i1", "A", "j", cluster="c1"),
        _p("i2", "A", "j", cluster="c2"),
        _p("i3", "A", "j", cluster="c3"),
        _p("i4", "tie", "j", cluster="c4"),
    ]
    # strict: agree on i1 only → 1/4; half: i1 = 1, i3 and i4 = ½ → 2/4; exclude: i1, i2 → 1/2
    assert preference_agreement(human, judge, B=50).overall.estimate == pytest.approx(0.25)
    assert preference_agreement(human, judge, tie_policy="half", B=50).overall.estimate == (
        pytest.approx(0.5)
    )
    ex = preference_agreement(human, judge, tie_policy="exclude", B=50)
    assert ex.overall.estimate == pytest.approx(0.5)
    assert ex.n_excluded_ties == 2 and ex.n_compared == 2


def test_few_conversations_are_warned_about_and_ten_are_not() -> None:
    def pair(n: int) -> tuple[list[Preference], list[Preference]]:
        h = [_p(f"i{k}", "A", cluster=f"c{k}") for k in range(n)]
        return h, [_p(f"i{k}", "AB"[k % 2], "j", cluster=f"c{k}") for k in range(n)]

    few = preference_agreement(*pair(4), B=50)
    assert few.n_clusters == 4
    assert len(few.warnings) == 1 and "only 4 conversations" in few.warnings[0]
    assert "> **Warning:** only 4 conversations" in preference_markdown(few)
    ten = preference_agreement(*pair(10), B=50)
    assert ten.n_clusters == 10 and ten.warnings == []
    assert "Warning" not in preference_markdown(ten)


def test_swapped_option_order_is_mapped_and_per_question_reported() -> None:
    human = [
        _p("i1", "A", q="PW1", cluster="c1"),
        _p("i2", "B", q="PW2", cluster="c2"),
        _p("i3", None, q="PW2", cluster="c3"),
    ]
    judge = [
        _p("i1", "B", "j", q="PW1", a="human_edited", b="original", cluster="c1"),  # = A
        _p("i2", "A", "j", q="PW2", cluster="c2"),
        _p("i3", "A", "j", q="PW2", cluster="c3"),
    ]
    res = preference_agreement(human, judge, B=50)
    assert res.per_question["PW1"].estimate == 1.0
    assert res.per_question["PW2"].estimate == 0.0
    assert res.n_unanswered == 1
    assert res.join.matched == 3


def test_judge_preferences_from_scores_use_attunebench_keys() -> None:
    human = [_p("c1:1:pairwise:general:0", "A")]
    scores = {"c1:1:original": 0.9, "c1:1:human_edited": 0.4}
    out = judge_preferences_from_scores(human, scores, margin=0.1)
    assert [p.winner for p in out] == ["A"]
    assert out[0].metadata["score_a"] == 0.9
    assert judge_preferences_from_scores(human, {"c1:1:original": 0.9}) == []


def test_position_bias_by_hand() -> None:
    # pair 1: A then (swapped) B → consistent; pair 2: A and A → flip; pair 3: tie, tie → same
    res = position_bias(["A", "A", "tie"], ["B", "A", "tie"], ["c1", "c2", "c3"], B=100)
    assert res.flip_rate.estimate == pytest.approx(1 / 3)
    # decisive verdicts: A, A, B, A → first position wins 3 of 4
    assert res.first_position_win_rate.estimate == pytest.approx(0.75)
    assert res.tie_rate.estimate == pytest.approx(2 / 6)


def test_length_effect_recovers_a_known_slope() -> None:
    # P(A wins) = 0.5 + 0.1 · (len_a − len_b)/100, the truth is slope 0.1 per 100 chars
    rng = np.random.default_rng(0)
    n = 3000
    la = rng.integers(100, 400, n)
    lb = rng.integers(100, 400, n)
    p = 0.5 + 0.1 * (la - lb) / 100
    winners = np.where(rng.random(n) < p, "A", "B").tolist()
    res = length_effect(winners, la.tolist(), lb.tolist(), (np.arange(n) // 10).tolist())
    assert res.slope_lower < 0.1 < res.slope_upper
    assert res.intercept == pytest.approx(0.5, abs=0.03)
    assert res.n_clusters == 300
    logit = length_effect(
        winners, la.tolist(), lb.tolist(), (np.arange(n) // 10).tolist(), model="logit"
    )
    assert logit.slope > 0
    # point estimates equal independent fits on the same data: least squares (numpy) for the
    # linear probability model, maximum likelihood (statsmodels Logit) for the logit slope
    x = (la - lb) / 100
    y = (np.array(winners) == "A").astype(float)
    ols_slope, ols_intercept = np.polyfit(x, y, 1)
    assert (res.slope, res.intercept) == pytest.approx((ols_slope, ols_intercept))
    import statsmodels.api as sm

    fit = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    assert logit.slope == pytest.approx(fit.params[1], rel=1e-5)


def test_prediction_powered_means_remove_the_judge_bias() -> None:
    """Classical PPI (λ = 1) through the one PPI implementation, ``ppi_leaderboard``."""
    from attune_judge.calibration import ppi_leaderboard

    # truth: model a = 0, model b = 0.5; the judge adds +0.5 to everything;
    # humans label every 5th item
    rng = np.random.default_rng(1)
    models, clusters, judge, human = [], [], [], []
    for c in range(200):
        u = rng.normal(scale=0.3)
        for k, (name, mu) in enumerate((("a", 0.0), ("b", 0.5))):
            y = mu + u + rng.normal(scale=0.5)
            models.append(name)
            clusters.append(c)
            judge.append(y + 0.5 + rng.normal(scale=0.2))
            human.append(y if (c + k) % 5 == 0 else None)
    board = ppi_leaderboard(models, clusters, judge, human, lam=1.0)
    rows = sorted(board.rows, key=lambda r: r.model)  # the board is ranked: b first
    assert [r.model for r in rows] == ["a", "b"]
    for row, truth in zip(rows, (0.0, 0.5), strict=True):
        ppi, judge_only, human_only = row.ppi, row.judge_only, row.human_only
        # hand formula (classical PPI): mean human on labelled items + (mean judge on the
        # unlabelled items − mean judge on the labelled ones)
        lab = [i for i, m in enumerate(models) if m == row.model and human[i] is not None]
        unl = [i for i, m in enumerate(models) if m == row.model and human[i] is None]
        expected = np.mean([human[i] for i in lab]) + (
            np.mean([judge[i] for i in unl]) - np.mean([judge[i] for i in lab])
        )
        assert row.lam == 1.0
        assert ppi.estimate == pytest.approx(expected)
        assert ppi.lower is not None and ppi.upper is not None
        assert ppi.lower < truth < ppi.upper
        assert judge_only.lower is not None and judge_only.lower > truth  # the biased judge misses
        assert human_only.lower is not None and human_only.upper is not None
        assert ppi.upper - ppi.lower < human_only.upper - human_only.lower  # PPI is tighter
