"""The leaderboard section reads the one typed leaderboard the run records store; given ranks
decide the order."""

from __future__ import annotations

from attune_judge.calibration import Metric, leaderboard
from attune_judge.report import Note, Table, leaderboard_section

# private unit: the leaderboard's entries (rank sets, P(rank 1)) before rendering
from attune_judge.report._leaderboard import leaderboard_entries
from attune_judge.runs import BenchLeaderboard, BenchRow


def _row(model: str, estimate: float | None, rank: int | None, **kw: object) -> BenchRow:
    score = Metric(name="mean", estimate=estimate, lower=None, upper=None, n=4, n_clusters=2)
    return BenchRow(model=model, score=score, rank=rank, **kw)  # type: ignore[arg-type]


def test_a_calibration_leaderboard_gives_its_rows_best_first() -> None:
    # m1 scores higher in every conversation, m2 in between, m3 lowest
    models = ["m1", "m2", "m3"] * 6
    clusters = [c for c in range(6) for _ in range(3)]
    scores = [v for c in range(6) for v in (0.9 - 0.01 * c, 0.5 + 0.01 * c, 0.1)]
    board = leaderboard(models, clusters, scores, B=200, seed=1)
    entries = leaderboard_entries(board)
    assert [e.model for e in entries] == ["m1", "m2", "m3"]
    assert [e.rank for e in entries] == [1, 2, 3]
    m1 = entries[0]
    assert abs(m1.mean - (sum(0.9 - 0.01 * c for c in range(6)) / 6)) < 1e-12  # type: ignore[operator]
    assert (m1.n, m1.n_clusters) == (6, 6)
    assert m1.lower is not None and m1.upper is not None and m1.lower < m1.mean < m1.upper
    assert (m1.rank_lower, m1.rank_upper) == tuple(board.rows[0].rank_set_simultaneous)
    assert (m1.marginal_lower, m1.marginal_upper) == tuple(board.rows[0].rank_set_marginal)
    # 6 conversations: no P(rank 1) (issue 42: no claim below MIN_CLUSTERS), point ranks kept
    assert all(e.p_rank_1 is None for e in entries)


def test_given_ranks_win_over_the_mean_and_models_without_a_score_go_last() -> None:
    # an error metric: the smaller mean ranks first, as the producer said
    board = BenchLeaderboard(
        rows=[_row("none", None, None), _row("worse", 2.0, 2), _row("better", 0.5, 1)]
    )
    entries = leaderboard_entries(board)
    assert [e.model for e in entries] == ["better", "worse", "none"]
    assert entries[-1].rank is None and entries[-1].mean is None


def test_scores_outside_zero_one_still_get_a_figure() -> None:
    board = BenchLeaderboard(rows=[_row("a", 2.5, 1)])
    section = leaderboard_section(board, score_label="MAE")
    assert len(section.figures()) == 1


def test_the_board_warnings_and_refused_rank_claims_are_shown() -> None:
    rows = [_row("a", 0.7, 1, rank_set_simultaneous=(1, 2)), _row("b", 0.6, 2)]
    board = BenchLeaderboard(rows=rows, warnings=["too few conversations"], rank_claims=False)
    section = leaderboard_section(board)
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    assert notes[0] == "too few conversations"
    assert any("No confidence sets for ranks: too few conversations" in n for n in notes)
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert "rank set (simultaneous)" not in table.columns
