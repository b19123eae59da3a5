"""Leaderboard input shapes are normalised the same way; given ranks decide the order."""

from __future__ import annotations

from attune_judge.report import leaderboard_entries, leaderboard_section

CALIBRATION_SHAPE = {
    "rows": [
        {
            "model": "m1",
            "score": {"estimate": 0.7, "lower": 0.6, "upper": 0.8, "n": 10, "n_clusters": 5},
            "rank": 1,
            "rank_set_simultaneous": [1, 2],
            "rank_set_marginal": [1, 1],
            "p_rank_1": 0.8,
        },
        {
            "model": "m2",
            "score": {"estimate": 0.6, "lower": 0.5, "upper": 0.7, "n": 10, "n_clusters": 5},
            "rank": 2,
            "rank_set_simultaneous": [1, 2],
            "rank_set_marginal": [2, 2],
            "p_rank_1": 0.2,
        },
    ]
}
RUNNER_SHAPE = {
    "m2": {"score": {"mean": 0.6, "lower": 0.5, "upper": 0.7, "n": 10, "n_conversations": 5}},
    "m1": {"score": {"mean": 0.7, "lower": 0.6, "upper": 0.8, "n": 10, "n_conversations": 5}},
}
FLAT_SHAPE = [
    {"model": "m2", "mean": 0.6, "lower": 0.5, "upper": 0.7, "rank_lower": 1, "rank_upper": 2},
    {"model": "m1", "mean": 0.7, "lower": 0.6, "upper": 0.8, "rank_lower": 1, "rank_upper": 2},
]


def test_three_shapes_give_the_same_entries() -> None:
    a = leaderboard_entries(CALIBRATION_SHAPE)
    b = leaderboard_entries(RUNNER_SHAPE)
    c = leaderboard_entries(FLAT_SHAPE)
    for entries in (a, b, c):
        assert [e.model for e in entries] == ["m1", "m2"]
        assert [e.mean for e in entries] == [0.7, 0.6]
        assert [e.rank for e in entries] == [1, 2]
    assert (a[1].marginal_lower, a[1].marginal_upper) == (2, 2)
    assert (c[0].rank_lower, c[0].rank_upper) == (1, 2)
    assert b[0].n_clusters == 5 and a[0].p_rank_1 == 0.8


def test_given_ranks_win_over_the_mean_for_lower_is_better_metrics() -> None:
    # an error metric: the smaller mean ranks first, as the producer said
    rows = [
        {"model": "worse", "score": {"estimate": 2.0}, "rank": 2},
        {"model": "better", "score": {"estimate": 0.5}, "rank": 1},
    ]
    assert [e.model for e in leaderboard_entries(rows)] == ["better", "worse"]


def test_scores_outside_zero_one_still_get_a_figure() -> None:
    section = leaderboard_section(
        [{"model": "a", "mean": 2.5, "lower": 2.0, "upper": 3.0}], score_label="MAE"
    )
    assert len(section.figures()) == 1
