"""Pass/fail judges: TPR, TNR, precision, NPV, balanced accuracy, leniency (by hand and by an
explicit resampling loop) and the Rogan–Gladen corrected pass rate (by hand, against the
``judgy`` package, and its named warnings)."""

from __future__ import annotations

import numpy as np
import pytest

from attune_judge.calibration import (
    binary_agreement,
    bootstrap_weights,
    corrected_pass_rates,
    rogan_gladen,
)
from attune_judge.errors import UserError

# 12 items in 5 conversations; judge, people (1 = pass)
JUDGE = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0]
HUMAN = [1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1]
CONV = ["a", "a", "a", "b", "b", "c", "c", "c", "d", "d", "e", "e"]


def test_figures_equal_the_textbook_formulas() -> None:
    # counted by hand from the columns above: TP 5, FP 2, FN 2, TN 3
    tp, fp, fn, tn = 5, 2, 2, 3
    res = binary_agreement(JUDGE, HUMAN, CONV, B=200, seed=1)
    assert (res.tp, res.fp, res.fn, res.tn) == (tp, fp, fn, tn)
    assert res.n == 12 and res.n_clusters == 5
    assert res.tpr.estimate == pytest.approx(5 / 7)
    assert res.tnr.estimate == pytest.approx(3 / 5)
    assert res.precision.estimate == pytest.approx(5 / 7)
    assert res.npv.estimate == pytest.approx(3 / 5)
    assert res.balanced_accuracy.estimate == pytest.approx((5 / 7 + 3 / 5) / 2)
    assert res.leniency.estimate == pytest.approx(7 / 12 - 7 / 12)
    assert res.judge_pass_rate == pytest.approx(7 / 12)
    assert res.human_pass_rate == pytest.approx(7 / 12)
    # the same with yes/no and pass/fail text
    text = binary_agreement(
        ["yes" if v else "no" for v in JUDGE], ["pass" if v else "fail" for v in HUMAN], CONV, B=50
    )
    assert text.tpr.estimate == res.tpr.estimate


def test_a_lenient_judge_has_positive_leniency() -> None:
    human = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0]
    judge = [1, 1, 1, 0, 1, 1, 0, 0, 1, 1]
    res = binary_agreement(judge, human, B=50)
    assert res.leniency.estimate == pytest.approx(0.7 - 0.3)
    assert res.tpr.estimate == 1.0 and res.tnr.estimate == pytest.approx(3 / 7)


def test_percentile_interval_equals_an_explicit_cluster_resampling_loop() -> None:
    """Replicate b: conversation c drawn w_bc times (the shared weights matrix), the figures
    recounted on the resampled items; quantiles of those, numpy's linear rule."""
    B, seed = 300, 7
    res = binary_agreement(JUDGE, HUMAN, CONV, B=B, seed=seed, method="percentile")
    names = sorted(set(CONV))
    W = bootstrap_weights(len(names), B, seed)
    tprs, lens = [], []
    for w in W:
        j, h = [], []
        for c, k in zip(names, w, strict=True):
            idx = [i for i, x in enumerate(CONV) if x == c]
            j += [JUDGE[i] for i in idx] * int(k)
            h += [HUMAN[i] for i in idx] * int(k)
        pos = sum(h)
        tprs.append(sum(a and b for a, b in zip(j, h, strict=True)) / pos if pos else np.nan)
        lens.append((sum(j) - sum(h)) / len(j))
    t = np.asarray(tprs)
    t = t[np.isfinite(t)]
    assert res.tpr.n_undefined_replicates == B - len(t)
    assert [res.tpr.lower, res.tpr.upper] == pytest.approx(list(np.quantile(t, [0.025, 0.975])))
    assert [res.leniency.lower, res.leniency.upper] == pytest.approx(
        list(np.quantile(lens, [0.025, 0.975]))
    )


def test_undefined_figures_say_why() -> None:
    res = binary_agreement([1, 0, 1], [1, 1, 1], ["a", "b", "c"], B=50)
    assert res.tnr.estimate is None and "fail" in (res.tnr.undefined_reason or "")
    assert res.tpr.estimate == pytest.approx(2 / 3)


def test_a_value_that_is_not_pass_or_fail_is_refused() -> None:
    with pytest.raises(UserError, match="human verdict 'maybe'"):
        binary_agreement([1, 0], [1, "maybe"], B=10)
    with pytest.raises(UserError, match="not pass/fail"):
        corrected_pass_rates(["m", "m"], ["a", "b"], [0.5, 1], [1, None], B=10)


# --------------------------------------------------------------------------------------------
# corrected pass rates


def _rows(
    labelled: list[tuple[int, int]], unlabelled: list[int]
) -> tuple[list[str], list[str], list[int], list[int | None]]:
    """judgy's layout: a labelled test set (model ``test``) and unlabelled verdicts of ``m``,
    every item its own conversation."""
    n_l = len(labelled)
    models = ["test"] * n_l + ["m"] * len(unlabelled)
    clusters = [f"c{i}" for i in range(n_l + len(unlabelled))]
    judge = [j for j, _ in labelled] + unlabelled
    human: list[int | None] = [h for _, h in labelled] + [None] * len(unlabelled)
    return models, clusters, judge, human


def test_rogan_gladen_by_hand() -> None:
    # labelled: TP 8, FN 2 (TPR 0.8), TN 9, FP 1 (TNR 0.9); unlabelled: 12 of 20 pass
    labelled = [(1, 1)] * 8 + [(0, 1)] * 2 + [(0, 0)] * 9 + [(1, 0)]
    unlabelled = [1] * 12 + [0] * 8
    res = corrected_pass_rates(*_rows(labelled, unlabelled), B=200)
    row = next(r for r in res.rows if r.model == "m")
    expected = (0.6 + 0.9 - 1) / (0.8 + 0.9 - 1)
    assert row.corrected.estimate == pytest.approx(expected, abs=1e-12)
    assert rogan_gladen(0.6, 0.8, 0.9) == pytest.approx(expected, abs=1e-12)
    assert row.judge_rate == pytest.approx(0.6)
    assert res.youden.estimate == pytest.approx(0.7)
    assert row.corrected.lower < expected < row.corrected.upper
    assert row.n_items == 20 and row.n_labelled == 0
    codes = {w.code for w in res.warnings if w.model != "test"}
    assert "few_labels" in codes and codes <= {"few_labels", "clipped"}  # 20 labels


def _judgy_sets() -> list[tuple[list[int], list[int], list[int]]]:
    """Three unclustered data sets: (test labels, test predictions, unlabelled predictions);
    the third's raw estimate exceeds 1, so both clip it."""
    rng = np.random.default_rng(42)
    out = []
    for n, N, tpr, tnr, theta in ((40, 200, 0.85, 0.8, 0.6), (120, 500, 0.9, 0.7, 0.3)):
        y = (rng.random(n) < theta).astype(int)
        u = rng.random(n)
        f = np.where(y == 1, u < tpr, u >= tnr).astype(int)
        yu = rng.random(N) < theta
        uu = rng.random(N)
        fu = np.where(yu, uu < tpr, uu >= tnr).astype(int)
        out.append((y.tolist(), f.tolist(), fu.tolist()))
    # TPR 0.75, TNR 0.75 on the test set, 90% judge passes: raw (0.9 + 0.75 - 1) / 0.5 = 1.3
    out.append(([1] * 4 + [0] * 4, [1, 1, 1, 0, 0, 0, 0, 1], [1] * 9 + [0]))
    return out


@pytest.mark.parametrize("case", range(3))
def test_point_estimate_equals_judgy(case: int) -> None:
    judgy = pytest.importorskip("judgy")
    labels, preds, unlabelled = _judgy_sets()[case]
    theirs, _, _ = judgy.estimate_success_rate(labels, preds, unlabelled, bootstrap_iterations=200)
    res = corrected_pass_rates(
        *_rows(list(zip(preds, labels, strict=True)), unlabelled), B=200, ppi=False
    )
    row = next(r for r in res.rows if r.model == "m")
    assert row.corrected.estimate == pytest.approx(theirs, abs=1e-12)
    if case == 2:
        assert row.raw_estimate == pytest.approx(1.3, abs=1e-12)
        assert row.clipped[0] == "estimate" and row.corrected.estimate == 1.0
        assert "clipped" in {w.code for w in res.warnings}


def test_a_judge_no_better_than_chance_gives_no_rate() -> None:
    labelled = [(1, 1), (0, 1), (1, 0), (0, 0)] * 5  # TPR = TNR = 0.5
    res = corrected_pass_rates(*_rows(labelled, [1, 0, 1]), B=100)
    row = next(r for r in res.rows if r.model == "m")
    assert row.corrected.estimate is None
    assert "not identified" in (row.corrected.undefined_reason or "")
    assert [w.code for w in res.warnings] == ["not_identified"]


def test_a_weak_judge_is_warned_about() -> None:
    # TPR 0.65, TNR 0.65: J = 0.3 < 0.4
    labelled = [(1, 1)] * 13 + [(0, 1)] * 7 + [(0, 0)] * 13 + [(1, 0)] * 7
    res = corrected_pass_rates(*_rows(labelled * 2, [1, 0] * 30), B=200)
    codes = {w.code for w in res.warnings}
    assert "weak_judge" in codes and "few_labels" not in codes  # 80 labelled items
    assert res.youden.estimate == pytest.approx(0.3)


def test_labels_on_the_run_items_and_ppi_beside() -> None:
    """Labels on some of the run's own items (two models): p_obs counts every item of a model,
    TPR/TNR pool the labelled items of both; PPI++ is the same as ppi_leaderboard's."""
    from attune_judge.calibration import ppi_leaderboard

    rng = np.random.default_rng(3)
    models, clusters, judge, human = [], [], [], []
    for c in range(30):
        for m, theta in (("a", 0.8), ("b", 0.5)):
            for _ in range(4):
                y = int(rng.random() < theta)
                f = int(rng.random() < (0.9 if y else 0.15))
                models.append(m)
                clusters.append(f"c{c}")
                judge.append(f)
                human.append(y if c < 15 else None)
    res = corrected_pass_rates(models, clusters, judge, human, B=300)
    lab = [h is not None for h in human]
    pos = [j for j, h in zip(judge, human, strict=True) if h == 1]
    neg = [j for j, h in zip(judge, human, strict=True) if h == 0]
    tpr, tnr = sum(pos) / len(pos), 1 - sum(neg) / len(neg)
    board = ppi_leaderboard(models, clusters, judge, human)
    for row in res.rows:
        mine = [j for j, m in zip(judge, models, strict=True) if m == row.model]
        p = sum(mine) / len(mine)
        assert row.corrected.estimate == pytest.approx((p + tnr - 1) / (tpr + tnr - 1))
        assert row.n_labelled == sum(
            1 for m, lb in zip(models, lab, strict=True) if m == row.model and lb
        )
        ppi = next(r for r in board.rows if r.model == row.model).ppi
        assert row.ppi == ppi
    assert res.n_labelled_clusters == 15 and res.n_clusters == 30


def test_calibrate_on_pass_fail_scores_reports_the_figures() -> None:
    """A checklist question scored 0/1 by one person and the judge: ``calibrate`` adds the
    pass/fail figures to the judge's report, the console text and (typed) the summary."""
    from attune_judge.calibration import calibrate, calibration_markdown
    from attune_judge.data import Rating

    human = [
        Rating(item_id=f"i{k}", rater="p", dimension="q1", value=float(v), cluster=c)
        for k, (v, c) in enumerate(zip(HUMAN, CONV, strict=True))
    ]
    judge = [
        Rating(item_id=f"i{k}", rater="J", dimension="q1", value=float(v), cluster=c)
        for k, (v, c) in enumerate(zip(JUDGE, CONV, strict=True))
    ]
    rep = calibrate(human, judge, B=100)
    b = rep.dimensions[0].judges[0].binary
    assert b is not None and (b.tp, b.fp, b.fn, b.tn) == (5, 2, 2, 3)
    assert b.tpr.estimate == pytest.approx(5 / 7)
    assert "pass/fail classifier" in calibration_markdown(rep)
    # a 1-5 rating is not pass/fail: no such figures
    ratings = [r.model_copy(update={"value": 3.0 + r.value}) for r in judge]
    assert calibrate(human, ratings, B=50).dimensions[0].judges[0].binary is None
