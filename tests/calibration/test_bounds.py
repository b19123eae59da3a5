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
    Metric,
    bootstrap_statistic,
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
from attune_judge.cli import main
from attune_judge.data import JudgeItem, Rating
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


def _pass_fail_mean(lengths: list[int], passes: list[int]) -> Metric:
    """The public interval of a pass rate: conversation c has lengths[c] turns, passes[c]
    of them passed."""
    labels: list[str] = []
    clusters: list[str] = []
    values: list[float] = []
    for c, (n, k) in enumerate(zip(lengths, passes, strict=True)):
        labels += ["m"] * n
        clusters += [f"c{c}"] * n
        values += [1.0] * k + [0.0] * (n - k)
    sums = ClusterSums.from_long(labels, clusters, values)
    return paired_cluster_bootstrap(sums, B=200, bounds=(0.0, 1.0)).means[0]


def _wilson(x: float, n: float) -> tuple[float, float]:
    """The Wilson score interval (95%) of a proportion x from n observations, written out."""
    z = stats.norm.ppf(0.975)
    centre = (x + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(x * (1 - x) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_wilson_interval_with_design_effect_matches_the_formula() -> None:
    # pass/fail scores in C = 10 conversations: the Wilson interval of n_eff = x̂(1 − x̂)/v̂,
    # v̂ the cluster-robust variance C/(C − 1)·Σ(S_c − x̂ n_c)²/N², scaled by (z / t_df)² with
    # df = Kish's effective number of conversations N²/Σn_c² − 1 (C − 1 for equal lengths)
    z = stats.norm.ppf(0.975)
    for lengths, passes in (
        ([2, 3, 4, 5, 6, 2, 3, 4, 5, 6], [2, 3, 3, 5, 5, 2, 2, 4, 5, 5]),  # 36/40, Kish 8.9
        ([4] * 10, [4, 3, 4, 4, 3, 4, 4, 4, 3, 4]),  # 37/40, Kish 10
    ):
        N, C = sum(lengths), len(lengths)
        x = sum(passes) / N
        squares = sum((k - x * n) ** 2 for k, n in zip(passes, lengths, strict=True))
        v = C / (C - 1) * squares / N**2
        kish = N**2 / sum(n * n for n in lengths)
        n_eff = x * (1 - x) / v * (z / stats.t.ppf(0.975, kish - 1)) ** 2
        m = _pass_fail_mean(lengths, passes)
        assert m.method == "score" and m.estimate == pytest.approx(x, abs=1e-12)
        lower, upper = _wilson(x, n_eff)
        assert m.lower == pytest.approx(lower, abs=1e-12)
        assert m.upper == pytest.approx(upper, abs=1e-12)
    # every score at the bound: n_eff = Kish's effective number of conversations (8.9 here)
    # scaled by (z / t_{C−1})²; Wilson at x̂ = 1 gives [n/(n + z²), 1]
    lengths = [2, 3, 4, 5, 6, 2, 3, 4, 5, 6]
    n = sum(lengths) ** 2 / sum(k * k for k in lengths) * (z / stats.t.ppf(0.975, 9)) ** 2
    top = _pass_fail_mean(lengths, lengths)
    assert top.lower == pytest.approx(n / (n + z * z), abs=1e-12) and top.upper == 1.0
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


def test_a_scoring_summary_warns_when_every_score_is_at_the_bound(tmp_path: Path) -> None:
    from attune_judge.runner import plan_tasks, run_tasks
    from attune_judge.runs import read_summary
    from tests.runner._fakes import FakeJudge, make_items

    # 12 conversations x 3 turns; "perfect" scores 1 on every turn, "other" 1 unless
    # (conversation + turn) % 3 == 0
    items = make_items(12, 3, models=("perfect", "other"))

    def score(item: JudgeItem) -> float:
        if item.candidate_model == "perfect":
            return 1.0
        return float((int(str(item.conversation_id)[1:]) + item.turn) % 3 != 0)

    run_tasks(
        tmp_path / "run",
        plan_tasks(items, [FakeJudge(score)]),
        command="score",
        arguments={},
        inputs={},
        data_fingerprint="test",
        B=300,
        seed=0,
        fsync_interval_s=None,
    )
    summary = read_summary(tmp_path / "run")
    assert isinstance(summary, ScoreSummary)
    block = summary.judges["fake-judge"]
    # as the runner does: the model blocks' intervals are the one leaderboard's rows
    assert block.leaderboard is not None
    rows = {r.model: r.score for r in block.leaderboard.rows}
    perfect, other = block.models["perfect"].score, block.models["other"].score
    assert perfect is not None and other is not None
    assert (perfect.lower, perfect.upper) == (rows["perfect"].lower, rows["perfect"].upper)
    assert perfect.upper == 1.0 and perfect.lower is not None and perfect.lower < 1.0
    assert "every score is at the bound 1" in (perfect.note or "")
    assert [w.split(":")[0] for w in block.warnings] == ["perfect"]
    assert other.lower is not None and other.upper is not None
    assert 0.0 <= other.lower < other.upper <= 1.0
