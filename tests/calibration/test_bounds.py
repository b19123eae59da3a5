"""Statistics at the bounds: pass/fail scores, ceilings, one conversation, bad numbers (issue 25).

Coverage of the intervals for bounded scores is simulated in ``test_coverage.py``; here are the
cases that used to fail one by one, each with the value worked out by hand or from a formula.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from attune_judge.calibration import (
    ClusterSums,
    bootstrap_statistic,
    bootstrap_weights,
    difference_intervals,
    expected_calibration_error,
    fmt_metric,
    krippendorff_alpha,
    leaderboard,
    leaderboard_markdown,
    paired_cluster_bootstrap,
    probability_calibration,
    ratings_to_table,
)
from attune_judge.calibration.resampling._bounded import wilson_cluster_endpoints
from attune_judge.calibration.resampling._means import studentized_or_percentile
from attune_judge.calibration.resampling._ratio import ratio_replicate_variances
from attune_judge.cli import main
from attune_judge.data import Rating
from attune_judge.errors import UserError
from attune_judge.report import write_report
from attune_judge.runs import ScoreSummary, write_summary


def _pass_fail_board_data() -> tuple[list[str], list[str], list[float]]:
    """20 conversations, 58 turns; A passes 58/58, B 32/58, six others 0.88–0.97."""
    rng = np.random.default_rng(1)
    m = rng.integers(2, 4, 20)
    while m.sum() != 58:
        m = rng.integers(2, 4, 20)
    conv = [f"c{c:02d}" for c in np.repeat(np.arange(20), m)]
    models: list[str] = []
    clusters: list[str] = []
    scores: list[float] = []
    rates = {"c": 0.97, "d": 0.95, "e": 0.93, "f": 0.9, "g": 0.96, "h": 0.98}
    for name in ["A", "B", *rates]:
        if name == "A":
            x = np.ones(58)
        elif name == "B":
            x = np.zeros(58)
            x[rng.choice(58, 32, replace=False)] = 1
        else:
            x = (rng.random(58) < rates[name]).astype(float)
        models += [name] * 58
        clusters += conv
        scores += x.tolist()
    return models, clusters, scores


def test_rank_sets_separate_58_of_58_from_32_of_58() -> None:
    # before: the critical value was NaN (more than 5% of the max-t replicates were +inf and
    # numpy's quantile gave inf − inf), so every rank set was [1, 8] and nothing said why
    lb = leaderboard(*_pass_fail_board_data(), B=2000)
    crit = lb.rank_sets_simultaneous.critical_values[0]
    assert all(np.isfinite(c) for c in crit)
    rows = {r.model: r for r in lb.rows}
    # A is declared better than exactly one model (its worst rank 7 of 8), and that is B: B's
    # best rank is 7 (six models, A among them, declared better) and B is a tier of its own
    assert rows["A"].rank_set_simultaneous == (1, 7)
    assert rows["B"].rank_set_simultaneous == (7, 8)
    assert lb.tiers[-1] == ["B"] and len(lb.tiers) > 1
    # the perfect model's interval is not [1, 1]: it is a Wilson interval with each
    # conversation as one observation, and a warning says coverage is not promised
    a = rows["A"].score
    assert a.method == "score" and a.upper == 1.0 and a.lower is not None and a.lower < 0.9
    assert any(w.startswith("A: every score is at the bound 1") for w in lb.warnings)
    assert "Warning:** A: every score is at the bound 1" in leaderboard_markdown(lb)


def test_wilson_interval_with_design_effect_matches_the_formula() -> None:
    # x̂ = 0.9, v̂ = 0.0009 → n_eff = 0.09 / 0.0009 = 100; with C = 10 conversations of
    # unequal length (Kish's effective number 8) the effective n is scaled by (z / t_7)², with
    # equal lengths (Kish 10) by (z / t_9)²; the Wilson interval of that n, written out here
    z, t9 = stats.norm.ppf(0.975), stats.t.ppf(0.975, 9)
    for kish, df in ((8.0, 7), (10.0, 9)):
        n = 100 * (z / stats.t.ppf(0.975, df)) ** 2
        centre = (0.9 + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(0.9 * 0.1 / n + z * z / (4 * n * n))
        ends = wilson_cluster_endpoints(0.9, 0.0009, (0.0, 1.0), n_clusters=10, kish=kish)
        assert ends.lower == pytest.approx(centre - half, abs=1e-12)
        assert ends.upper == pytest.approx(centre + half, abs=1e-12)
    # every score at the bound: n_eff = Kish's effective number of conversations (8 here),
    # Wilson at x̂ = 1 gives [n/(n + z²), 1]
    n8 = 8 * (z / t9) ** 2
    top = wilson_cluster_endpoints(1.0, 0.0, (0.0, 1.0), n_clusters=10, kish=8.0)
    assert top.lower == pytest.approx(n8 / (n8 + z * z), abs=1e-12) and top.upper == 1.0
    assert top.note is not None and top.note.startswith("every score is at the bound 1")


def test_bounded_intervals_stay_inside_the_scale() -> None:
    # before: a pass rate of 53/58 got an upper end of 1.139 (raw-scale studentized)
    models, clusters, scores = _pass_fail_board_data()
    lb = leaderboard(models, clusters, scores, B=2000)
    for r in lb.rows:
        assert 0.0 <= r.score.lower <= r.score.estimate <= r.score.upper <= 1.0  # type: ignore[operator]
    sums = ClusterSums.from_long(models, clusters, scores)
    diffs = difference_intervals(sums, [(0, 1), (0, 2)], B=1000, bounds=(0.0, 1.0))
    assert [d.method for d in diffs] == ["mover", "mover"]
    for d in diffs:
        assert -1.0 <= d.lower <= d.estimate <= d.upper <= 1.0  # type: ignore[operator]


def test_replicate_variance_without_spread_is_zero_not_rounding_noise() -> None:
    # every score 0.1: a replicate's expanded Σw(S − θ*n)² cancels to ~1e-18 instead of 0, and
    # a deviation divided by its square root was a huge finite t*
    S = np.array([[0.1 * 3], [0.1 * 7], [0.1 * 5]])
    n = np.array([[3.0], [7.0], [5.0]])
    sums = ClusterSums(["a", "b", "c"], ["m"], S, n)
    W = bootstrap_weights(3, 200, seed=1)
    assert np.all(ratio_replicate_variances(sums, W) == 0.0)


def test_implausibly_wide_studentized_interval_falls_back_to_percentile() -> None:
    reps = np.linspace(0.4, 0.6, 1000)
    tstar = np.full(1000, 1e6)  # what rounding in SE* produced: huge finite t-values
    ends = studentized_or_percentile(0.5, 0.05, tstar, reps, 0.95, span=0.2)
    assert ends.method == "percentile"
    assert 0.4 <= ends.lower <= ends.upper <= 0.6  # type: ignore[operator]
    assert ends.note is not None and "implausibly wide" in ends.note


def test_zero_width_intervals_are_marked_degenerate(tmp_path: Path) -> None:
    res = paired_cluster_bootstrap(
        ClusterSums.from_long(["m"] * 6, list("aabbcc"), [1.0] * 6), B=200, method="percentile"
    )
    m = res.means[0]
    assert (m.lower, m.upper) == (1.0, 1.0)
    assert m.note is not None and "degenerate" in m.note
    assert fmt_metric(m).endswith("(degenerate: zero width)")
    summary = _one_model_summary({"mean": 1.0, "lower": 1.0, "upper": 1.0, "level": 0.95})
    assert "| 1.000 | [1.000, 1.000] (degenerate) |" in _report_md(tmp_path, summary)


def _one_model_summary(score: dict[str, float]) -> ScoreSummary:
    """A score run's typed summary: one judge, one model with this normalised-score interval."""
    counts = {"ok": 6, "parse_error": 0, "lm_error": 0, "refused": 0, "missing": 0}
    interval = {**score, "method": "percentile", "B": 100, "seed": 0, "n": 6, "n_conversations": 3}
    model = {"n_planned": 6, "n_judged": 6, "n_ok": 6, "n_by_status": counts, "score": interval}
    return ScoreSummary.model_validate(
        {
            "run": {"n_tasks": 6, "n_by_status": counts, "complete": True},
            "judges": {"j": {"label": "x", "models": {"m": model}}},
        }
    )


def _report_md(run_dir: Path, summary: ScoreSummary) -> str:
    """The report.md that the one renderer writes for a run directory holding ``summary``."""
    write_summary(run_dir, summary)
    md, _ = write_report(run_dir)
    return md.read_text("utf-8")


def test_report_labels_the_level_it_was_run_at(tmp_path: Path) -> None:
    # before: `score --ci 0.9` wrote "[95% CI]" over 90% intervals
    score = {"mean": 0.5, "lower": 0.4, "upper": 0.6, "level": 0.9}
    md = _report_md(tmp_path, _one_model_summary(score))
    assert "| 90% interval |" in md and "90% intervals from" in md and "95%" not in md


def test_one_conversation_gives_a_reason_not_an_interval() -> None:
    m = bootstrap_statistic(lambda w: w @ np.array([0.7]), 1, name="x", B=100)
    assert m.estimate == pytest.approx(0.7) and m.lower is None and m.upper is None
    assert m.note is not None and "single conversation" in m.note
    assert fmt_metric(m) == "0.700 (no interval: a single conversation)"
    res = paired_cluster_bootstrap(ClusterSums.from_long(["m"] * 3, ["c"] * 3, [1.0, 2, 3]), B=50)
    assert res.means[0].lower is None and "single conversation" in (res.means[0].note or "")
    # α from one conversation: before, [est, est]
    recs = [
        Rating(item_id=f"i{i}", rater=r, value=v, dimension="d", cluster="c0")
        for i, (a, b) in enumerate([(1, 1), (2, 3), (4, 4), (5, 4)])
        for r, v in (("h1", a), ("h2", b))
    ]
    alpha = krippendorff_alpha(ratings_to_table(recs), "interval", B=100)
    assert alpha.estimate is not None and alpha.lower is None
    assert "single conversation" in (alpha.note or "")


def test_human_alpha_resamples_only_conversations_humans_rated() -> None:
    # 20 conversations rated by two humans; 30 more rated by one coder only (the judge's
    # items, present in the table with a single rating): α's bootstrap has 20 clusters
    recs = []
    rng = np.random.default_rng(3)
    for c in range(50):
        v = int(rng.integers(1, 6))
        raters = ("h1", "h2") if c < 20 else ("h1",)
        for r in raters:
            recs.append(
                Rating(item_id=f"c{c}", rater=r, value=min(5, v + (r == "h2")), cluster=f"c{c}")
            )
    alpha = krippendorff_alpha(ratings_to_table(recs), "interval", B=200)
    assert alpha.n_clusters == 20


def test_infinite_scores_are_refused_with_row_and_field() -> None:
    models, clusters, scores = _pass_fail_board_data()
    scores[5] = float("inf")
    with pytest.raises(UserError) as err:
        leaderboard(models, clusters, scores, B=100)
    assert str(err.value).startswith("row 6 (model 'A', cluster ") and "score is inf" in str(
        err.value
    )


def test_rank_refuses_an_infinite_score_in_a_file_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"model": m, "cluster": f"c{c}", "score": 0.5} for m in "ab" for c in range(12)]
    rows[3]["score"] = float("inf")  # json writes Infinity, which Python's json reads back
    path = tmp_path / "scores.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(SystemExit) as ex:
        main(["rank", str(path), "--B", "200"])
    err = capsys.readouterr().err
    assert ex.value.code == 2 and "Traceback" not in err
    assert f"{path}: row 4: field 'score'" in err and len(err.strip().splitlines()) == 1


def test_nan_scores_are_counted_and_a_model_without_scores_is_listed() -> None:
    models, clusters, scores = _pass_fail_board_data()
    scores[60] = float("nan")  # one of B's
    models += ["z"] * 3
    clusters += ["c00", "c01", "c02"]
    scores += [float("nan")] * 3
    lb = leaderboard(models, clusters, scores, B=200)
    assert lb.nan_scores == {"B": 1, "z": 3}
    assert lb.models_without_scores == {"z": "all 3 scores are NaN"}
    assert "z" not in [r.model for r in lb.rows]
    assert "B: 1 NaN score(s) skipped" in lb.warnings
    assert any(w.startswith("z: no usable score") for w in lb.warnings)


def test_leaderboard_level_as_a_percentage_is_a_clear_error() -> None:
    with pytest.raises(
        UserError,
        match=r"level is a confidence level between 0 and 1 \(e.g. 0.95\), not 95 "
        r"\(did you mean 0.95\?\)",
    ):
        leaderboard(["a", "b"] * 10, [f"c{i // 2}" for i in range(20)], [0.5] * 20, level=95)


def test_the_two_ece_functions_bin_edge_forecasts_alike() -> None:
    # confidences 0.6 (hit), 0.65 (hit), 0.55 (miss); bins (l, u]: 0.6 shares (0.5, 0.6]
    # with 0.55: |0.5 − 0.575|·2/3 + |1 − 0.65|·1/3 = 0.05 + 0.11667 = 1/6
    # (bins [l, u) put 0.6 with 0.65 instead: 0.55/3 + 0.375·2/3 = 0.4333)
    probs = [[0.6, 0.4], [0.35, 0.65], [0.55, 0.45]]
    labels = [0, 1, 1]
    assert expected_calibration_error(probs, labels) == pytest.approx(1 / 6, abs=1e-12)
    cal = probability_calibration(probs, labels, B=50)
    assert cal.ece.estimate == pytest.approx(1 / 6, abs=1e-12)


def test_multiclass_murphy_terms_add_up_to_the_reported_brier() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=60)
    y = rng.integers(0, 4, 60)
    cal = probability_calibration(p, y, B=50)
    by_hand = float(np.mean(np.sum((p - np.eye(4)[y]) ** 2, axis=1)))
    assert cal.brier.estimate == pytest.approx(by_hand, abs=1e-12)
    total = cal.reliability - cal.resolution + cal.uncertainty + cal.within_bin
    assert total == pytest.approx(by_hand, abs=1e-12)
    # the uncertainty term of a multi-class Brier score is Σ_k ȳ_k (1 − ȳ_k)
    ybar = np.bincount(y, minlength=4) / 60
    assert cal.uncertainty == pytest.approx(float(np.sum(ybar * (1 - ybar))), abs=1e-12)


def test_a_scoring_summary_warns_when_every_score_is_at_the_bound() -> None:
    from attune_judge.data import Judgment
    from attune_judge.runner._summary import _score_intervals, judge_leaderboard

    ok = [
        Judgment(
            item_id=f"{m}-{c}-{t}",
            judge_id="j",
            status="ok",
            candidate_model=m,
            conversation_id=f"c{c}",
            normalized=1.0 if m == "perfect" else float((c + t) % 3 != 0),
        )
        for m in ("perfect", "other")
        for c in range(12)
        for t in range(3)
    ]
    # as the runner does: the model blocks' intervals are the one leaderboard's rows
    board = judge_leaderboard(ok, seed=0, B=300, level=0.95)
    assert board is not None
    intervals, warnings = _score_intervals(board, ok, seed=0, B=300, level=0.95)
    perfect, other = intervals["perfect"], intervals["other"]
    assert perfect.upper == 1.0 and perfect.lower is not None and perfect.lower < 1.0
    assert "every score is at the bound 1" in (perfect.note or "")
    assert [w.split(":")[0] for w in warnings] == ["perfect"]
    assert other.lower is not None and other.upper is not None
    assert 0.0 <= other.lower < other.upper <= 1.0
