"""ICC, Gwet's AC1, Scott's π, generalised Fleiss' κ, Brier score and ECE on published examples.

Every expected value below is printed in the cited publication or documentation (not produced by
this code); tolerances follow the printed precision.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from attune_judge.calibration import (
    RatingTable,
    binary_brier_score,
    brier_score,
    expected_calibration_error,
    fleiss_kappa,
    gwet_ac1,
    intraclass_correlation,
    pair_agreement,
    probability_calibration,
    reliability_diagram,
)
from attune_judge.errors import UserError

REF = Path(__file__).resolve().parent / "published_examples.json"


def _ref(key: str) -> dict:
    return json.loads(REF.read_text(encoding="utf-8"))[key]


# --- ICC: Shrout & Fleiss (1979), Psychological Bulletin 86:420-428 -----------------------------


def test_icc_reproduces_shrout_fleiss_1979_tables_3_and_4() -> None:
    ex = _ref("shrout_fleiss_1979")
    res = intraclass_correlation(ex["data_targets_x_judges"], bootstrap=False)
    ms = ex["table3_mean_squares"]
    assert res.BMS == pytest.approx(ms["BMS"], abs=0.005)
    assert res.WMS == pytest.approx(ms["WMS"], abs=0.005)
    assert res.JMS == pytest.approx(ms["JMS"], abs=0.005)
    assert res.EMS == pytest.approx(ms["EMS"], abs=0.005)
    got = {f.form: f for f in res.forms}
    for form, value in ex["table4_icc"].items():
        assert got[form].estimate == pytest.approx(value, abs=0.005), form
    # the F intervals as printed by R psych::ICC(sf) (3 decimals where printed, else 2)
    for form, (lo, hi, tol) in ex["psych_icc_intervals"].items():
        assert got[form].lower == pytest.approx(lo, abs=tol), form
        assert got[form].upper == pytest.approx(hi, abs=tol), form
    assert got["ICC(3,1)"].F == pytest.approx(11.027, abs=5e-4)
    assert got["ICC(1,1)"].F == pytest.approx(1.795, abs=5e-4)


def test_icc_equals_closed_forms_of_the_mean_squares() -> None:
    """ICC(1,k), ICC(3,k) are 1 − 1/F; ICC(3,1) is (F − 1)/(F + k − 1) (exact identities)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 1)) + rng.normal(scale=0.7, size=(20, 3)) + [0.0, 0.4, -0.2]
    res = intraclass_correlation(X, bootstrap=False)
    f = {r.form: r for r in res.forms}
    F3 = res.BMS / res.EMS
    assert f["ICC(3,k)"].estimate == pytest.approx(1 - 1 / F3, rel=1e-12)
    assert f["ICC(3,1)"].estimate == pytest.approx((F3 - 1) / (F3 + 2), rel=1e-12)
    assert f["ICC(1,k)"].estimate == pytest.approx(1 - res.WMS / res.BMS, rel=1e-12)
    for r in res.forms:
        assert r.lower < r.estimate < r.upper


def test_icc_bootstrap_and_missing_targets() -> None:
    ex = _ref("shrout_fleiss_1979")
    X = np.array(ex["data_targets_x_judges"], dtype=float)
    X = np.vstack([X, [1.0, np.nan, 2.0, 3.0]])
    res = intraclass_correlation(X, clusters=list("aabbccd"), B=300)
    assert res.n_left_out == 1 and res.n_targets == 6 and res.n_clusters == 3
    boot = res.forms[2].bootstrap
    assert boot is not None and boot.estimate == pytest.approx(res.forms[2].estimate)
    with pytest.raises(UserError, match="two targets"):
        intraclass_correlation([[1.0, 2.0], [np.nan, 1.0]])


# --- Gwet (2014) Handbook of Inter-Rater Reliability, 4th ed.; printed by R/Python irrCAC --------


def _four_raters() -> RatingTable:
    data = _ref("gwet_2014_four_raters")["data_units_x_raters"]
    vals = [[None if v is None else float(v) for v in row] for row in data]
    n = len(vals)
    return RatingTable(
        [f"u{i:02d}" for i in range(n)],
        ["r1", "r2", "r3", "r4"],
        vals,
        [f"u{i:02d}" for i in range(n)],
    )


def test_fleiss_kappa_with_unequal_ratings_matches_gwet_2014() -> None:
    ex = _ref("gwet_2014_four_raters")
    t = _four_raters()
    fk = fleiss_kappa(t, B=200)
    assert fk.estimate == pytest.approx(ex["expected"]["fleiss_kappa"], abs=5e-6)
    assert fk.n == 11  # unit 12 has one rating: it enters π, not p_a; nothing is dropped
    assert "between 2 and 4 per item" in (fk.note or "")


def test_gwet_ac1_multi_rater_matches_gwet_2014() -> None:
    ex = _ref("gwet_2014_four_raters")
    ac1 = gwet_ac1(_four_raters(), B=200)
    assert ac1.estimate == pytest.approx(ex["expected"]["gwet_ac1"], abs=5e-6)
    assert ac1.lower is not None and ac1.upper is not None and ac1.lower < ac1.upper


def test_generalised_fleiss_equals_statsmodels_on_complete_data() -> None:
    rng = np.random.default_rng(1)
    vals = rng.integers(1, 5, size=(40, 5)).astype(float)
    t = RatingTable(
        [str(i) for i in range(40)], list("abcde"), vals.tolist(), [str(i // 4) for i in range(40)]
    )
    counts = np.stack([(vals == k).sum(1) for k in range(1, 5)], 1)
    assert fleiss_kappa(t, B=100).estimate == pytest.approx(sm_fleiss(counts), abs=1e-12)


def _table_to_pairs(T: list[list[int]]) -> tuple[list[str], list[str]]:
    x: list[str] = []
    y: list[str] = []
    for i, row in enumerate(T):
        for j, c in enumerate(row):
            x += [f"c{i}"] * c
            y += [f"c{j}"] * c
    return x, y


def test_scott_pi_and_ac1_two_raters_match_gwet_2014_abstractors() -> None:
    ex = _ref("gwet_2014_abstractors_3x3")
    x, y = _table_to_pairs(ex["table"])
    res = pair_agreement(
        x,
        y,
        list(range(len(x))),
        B=200,
        metrics=["raw_agreement", "cohen_kappa", "scott_pi", "gwet_ac1"],
    )
    for name, val in ex["expected"].items():
        assert res.metrics[name].estimate == pytest.approx(val, abs=5e-6), name


def test_scott_pi_equals_fleiss_with_two_raters() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 3, 50)
    b = np.where(rng.random(50) < 0.6, a, rng.integers(0, 3, 50))
    res = pair_agreement(
        [str(v) for v in a], [str(v) for v in b], list(range(50)), B=100, metrics=["scott_pi"]
    )
    t = RatingTable(
        [str(i) for i in range(50)],
        ["a", "b"],
        [[str(u), str(v)] for u, v in zip(a, b, strict=True)],
        [str(i) for i in range(50)],
    )
    assert res.metrics["scott_pi"].estimate == pytest.approx(
        fleiss_kappa(t, B=100).estimate, abs=1e-12
    )


# --- Brier score and reliability diagram: scikit-learn's documented examples --------------------


def test_brier_score_matches_sklearn_documentation() -> None:
    ex = _ref("sklearn_brier_score_loss")
    res = probability_calibration(ex["y_prob"], ex["y_true"], B=100)
    assert res.brier.estimate == pytest.approx(ex["expected"], abs=1e-12)
    # the same as the point-estimate helper of calibration._probabilistic
    assert binary_brier_score(ex["y_prob"], ex["y_true"]) == pytest.approx(ex["expected"])


def test_reliability_diagram_and_ece_match_sklearn_calibration_curve_example() -> None:
    ex = _ref("sklearn_calibration_curve")
    bins = reliability_diagram(ex["y_prob"], ex["y_true"], n_bins=ex["n_bins"])
    assert [b.observed_rate for b in bins] == pytest.approx(ex["prob_true"], abs=1e-12)
    assert [b.mean_forecast for b in bins] == pytest.approx(ex["prob_pred"], abs=1e-12)
    assert [b.n for b in bins] == [3, 2, 4]
    res = probability_calibration(ex["y_prob"], ex["y_true"], n_bins=ex["n_bins"], B=200)
    # ECE = Σ n_b/n |ȳ_b − p̄_b| from the documented curve: (3·0.2 + 2·0.025 + 4·0.15)/9
    assert res.ece.estimate == pytest.approx((3 * 0.2 + 2 * 0.025 + 4 * 0.15) / 9, abs=1e-12)
    # Murphy decomposition, exact up to the within-bin term
    bs = res.brier.estimate
    assert bs == pytest.approx(np.mean((np.array(ex["y_prob"]) - ex["y_true"]) ** 2))
    assert bs == pytest.approx(
        res.reliability - res.resolution + res.uncertainty + res.within_bin, abs=1e-12
    )


def test_ece_of_calibrated_forecasts_is_small_and_of_miscalibrated_large() -> None:
    rng = np.random.default_rng(0)
    p = rng.random(4000)
    y = (rng.random(4000) < p).astype(float)
    good = probability_calibration(p, y, [i // 10 for i in range(4000)], B=300)
    bad = probability_calibration(np.clip(p + 0.2, 0, 1), y, [i // 10 for i in range(4000)], B=300)
    assert good.ece.estimate is not None and good.ece.estimate < 0.03
    assert bad.ece.estimate is not None and bad.ece.estimate > 0.12
    assert bad.ece.lower is not None and bad.ece.lower > good.ece.upper  # type: ignore[operator]


def test_top_label_multiclass_and_bad_input() -> None:
    P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25]]
    y = [0, 1, 0, 2]
    res = probability_calibration(P, y, n_bins=2, B=100)
    assert res.kind == "top_label"
    onehot = np.eye(3)[y]
    assert res.brier.estimate == pytest.approx(np.mean(np.sum((np.array(P) - onehot) ** 2, 1)))
    with pytest.raises(UserError, match=r"\[0, 1\]"):
        probability_calibration([0.2, 1.3], [0, 1])
    with pytest.raises(UserError, match="0 or 1"):
        probability_calibration([0.2, 0.3], [0, 2])


def test_top_label_figures_agree_with_the_point_estimate_helpers() -> None:
    """``probability_calibration`` (with intervals) and ``_probabilistic``'s point helpers."""
    rng = np.random.default_rng(9)
    P = rng.dirichlet([2.0, 1.0, 1.0], size=200)
    y = rng.integers(0, 3, 200)
    res = probability_calibration(P, y, n_bins=10, B=100)
    assert res.brier.estimate == pytest.approx(brier_score(P, y), abs=1e-12)
    # both use 10 equal-width bins of the top-label confidence; they differ only for a
    # confidence exactly on a bin edge (none here: continuous Dirichlet draws)
    assert res.ece.estimate == pytest.approx(expected_calibration_error(P, y, bins=10), abs=1e-12)
