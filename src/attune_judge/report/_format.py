"""Number formatting shared by every section: one convention for estimates, intervals, ranks."""

from __future__ import annotations

from typing import Any

from attune_judge.calibration import fmt_num, to_float

__all__ = [
    "MISSING",
    "fmt_cost",
    "fmt_int",
    "fmt_interval",
    "fmt_num",
    "fmt_pct",
    "fmt_rank_set",
    "to_float",
]

MISSING = fmt_num(None)
"""What a table shows for a value that does not exist (undefined, not computed)."""


def fmt_interval(lower: Any, upper: Any, digits: int = 3) -> str:
    """``[lower, upper]``; ``—`` when either end is missing; a zero-width interval is marked.

    >>> fmt_interval(0.65, 0.7712)
    '[0.650, 0.771]'
    >>> fmt_interval(1.0, 1.0)
    '[1.000, 1.000] (degenerate)'
    """
    lo, hi = to_float(lower), to_float(upper)
    if lo is None or hi is None:
        return MISSING
    out = f"[{fmt_num(lo, digits)}, {fmt_num(hi, digits)}]"
    return out + " (degenerate)" if lo == hi else out


def fmt_rank_set(lower: Any, upper: Any) -> str:
    """A confidence set for a rank: ``1–3``, or ``2`` when it is a single rank.

    >>> fmt_rank_set(1, 3), fmt_rank_set(2, 2), fmt_rank_set(None, 2)
    ('1–3', '2', '—')
    """
    if lower is None or upper is None:
        return MISSING
    lo, hi = int(lower), int(upper)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def fmt_int(x: Any) -> str:
    """An integer with thousands separators (``12,345``); ``—`` when missing."""
    v = to_float(x)
    return MISSING if v is None else f"{round(v):,}"


def fmt_pct(x: Any, digits: int = 1) -> str:
    """A proportion as a percentage (``0.1234`` → ``12.3%``); ``—`` when missing."""
    v = to_float(x)
    return MISSING if v is None else f"{100 * v:.{digits}f}%"


def fmt_cost(x: Any) -> str:
    """A cost in US dollars (``$0.0123``; four decimals below one dollar); ``unknown`` if None."""
    v = to_float(x)
    if v is None:
        return "unknown"
    return f"${v:,.2f}" if abs(v) >= 1 else f"${v:.4f}"
