"""Bad input gives clear errors or explicit 'undefined' results, never NaN noise."""

from __future__ import annotations

import json

import pytest

from attune_judge.calibration import (
    RatingTable,
    calibrate,
    fleiss_kappa,
    krippendorff_alpha,
    pair_agreement,
    ratings_to_table,
)
from attune_judge.data import Rating
from attune_judge.errors import UserError


def _r(item: str, rater: str, value: object, dim: str = "overall") -> Rating:
    return Rating(item_id=item, rater=rater, value=value, dimension=dim, cluster=item)  # type: ignore[arg-type]


def test_items_with_fewer_than_two_raters_make_alpha_undefined() -> None:
    t = ratings_to_table([_r("a", "h1", 1), _r("b", "h2", 3), _r("c", "h1", 2)])
    res = krippendorff_alpha(t, "interval")
    assert res.estimate is None
    assert res.undefined_reason is not None and "two or more ratings" in res.undefined_reason
    assert "3 with a single rating" in (res.note or "")
    assert "NaN" not in json.dumps(res.model_dump())


def test_all_identical_values_report_undefined_alpha_and_kappa() -> None:
    recs = [_r(i, h, 4) for i in "abcd" for h in ("h1", "h2")]
    t = ratings_to_table(recs)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        res = krippendorff_alpha(t, level)  # type: ignore[arg-type]
        assert res.estimate is None and res.lower is None
        assert "identical" in (res.undefined_reason or "")
    fk = fleiss_kappa(t)
    assert fk.estimate is None and fk.undefined_reason
    kappa = pair_agreement([4.0] * 4, [4.0] * 4, list("abcd"), metrics=["cohen_kappa"])
    assert kappa.metrics["cohen_kappa"].estimate is None
    assert "NaN" not in json.dumps(kappa.model_dump())


def test_mismatched_item_ids_report_counts_and_examples() -> None:
    human = [_r(i, h, v) for i in ("x1", "x2", "x3", "x4", "x5") for h, v in (("h1", 1), ("h2", 2))]
    judge = [_r(i, "j", 1) for i in ("x2", "x3", "x4", "y9")]
    rep = calibrate(human, judge, B=20).dimensions[0].join
    assert (rep.matched, rep.left_only, rep.right_only) == (3, 2, 1)
    assert rep.left_only_examples == ["x1", "x5"] and rep.right_only_examples == ["y9"]
    with pytest.raises(UserError) as err:
        calibrate([_r("conv1:1", "h1", 1), _r("conv1:1", "h2", 2)], [_r("conv1-1", "j", 1)], B=20)
    assert "no item id matches" in str(err.value)
    assert "conv1-1" in str(err.value) and "conv1:1" in str(err.value)


def test_calibrate_with_no_matching_items_is_a_user_error() -> None:
    human = [_r("a", "h1", 1), _r("a", "h2", 2)]
    judge = [_r("b", "j", 1)]
    with pytest.raises(UserError, match="no item id matches"):
        calibrate(human, judge, B=20)


def test_non_numeric_values_at_interval_level_name_the_item() -> None:
    t = ratings_to_table(
        [_r("a", "h1", "high"), _r("a", "h2", 2), _r("b", "h1", 1), _r("b", "h2", 2)]
    )
    with pytest.raises(UserError) as err:
        krippendorff_alpha(t, "interval")
    assert "non-numeric" in str(err.value)
    assert "a/h1 = 'high'" in str(err.value)
    # nominal works on categories. By hand: units a = {high, 2}, b = {1, 2}; every pair
    # disagrees, D_o = 4/4 = 1; n = 4, n_high = 1, n_2 = 2, n_1 = 1 so
    # D_e = (16 - (1 + 4 + 1)) / (4 * 3) = 10/12 and alpha = 1 - 12/10 = -0.2
    # (the krippendorff package, coding 'high' as 9, also gives -0.2).
    assert krippendorff_alpha(t, "nominal", B=20).estimate == pytest.approx(-0.2)


def test_numeric_strings_are_numbers_and_conflicts_are_errors() -> None:
    t = ratings_to_table([_r("a", "h1", "3"), _r("a", "h2", 2.0)])
    assert t.numeric
    with pytest.raises(UserError, match="twice with different values"):
        ratings_to_table([_r("a", "h1", 3), _r("a", "h1", 4)])
    with pytest.raises(UserError, match="several dimensions"):
        ratings_to_table([_r("a", "h1", 3, "x"), _r("a", "h1", 4, "y")])


def test_values_off_the_declared_scale_are_rejected() -> None:
    with pytest.raises(UserError, match="not on the declared scale"):
        pair_agreement([1.0, 6.0], [1.0, 2.0], [0, 1], scale=[1.0, 2.0, 3.0])


def test_too_few_common_items() -> None:
    with pytest.raises(UserError, match="fewer than two"):
        pair_agreement([1.0], [1.0], [0])


def test_unpairable_table_in_fleiss() -> None:
    t = RatingTable(["a"], ["h"], [[1.0]], ["a"])
    assert fleiss_kappa(t).estimate is None


def test_missing_values_in_pair_agreement_are_rejected() -> None:
    with pytest.raises(UserError, match="missing values"):
        pair_agreement([1.0, float("nan"), 2.0], [1.0, 2.0, 3.0], [0, 1, 2])
