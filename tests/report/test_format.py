"""Number formatting: one convention for estimates, intervals, rank sets, counts and cost."""

from __future__ import annotations

import math

# private unit: the number formatters
from attune_judge.report._format import (
    fmt_cost,
    fmt_int,
    fmt_interval,
    fmt_num,
    fmt_pct,
    fmt_rank_set,
    to_float,
)


def test_numbers_have_three_decimals_and_missing_values_show_a_dash() -> None:
    assert fmt_num(0.71249) == "0.712"
    assert fmt_num(2 / 3) == "0.667"
    assert fmt_num(None) == "—"
    assert fmt_num(math.nan) == "—"
    assert fmt_num(math.inf) == "—"
    assert fmt_num("not a number") == "—"


def test_a_rounded_zero_has_no_sign() -> None:
    assert fmt_num(-0.0001, 2) == "0.00"
    assert fmt_num(-0.01, 2) == "-0.01"


def test_interval_needs_both_ends() -> None:
    assert fmt_interval(0.65, 0.7712) == "[0.650, 0.771]"
    assert fmt_interval(None, 0.7) == "—"
    assert fmt_interval(0.1, math.nan) == "—"


def test_rank_set_is_a_range_or_a_single_rank() -> None:
    assert fmt_rank_set(1, 3) == "1–3"
    assert fmt_rank_set(2, 2) == "2"
    assert fmt_rank_set(None, 2) == "—"


def test_counts_percentages_and_cost() -> None:
    assert fmt_int(12345) == "12,345"
    assert fmt_int(None) == "—"
    assert fmt_pct(1 / 8) == "12.5%"
    assert fmt_cost(0.008) == "$0.0080"
    assert fmt_cost(1234.5) == "$1,234.50"
    # unknown cost is never shown as $0
    assert fmt_cost(None) == "unknown"


def test_to_float_rejects_booleans_and_non_finite_values() -> None:
    assert to_float(True) is None
    assert to_float("0.5") == 0.5
    assert to_float(float("-inf")) is None
