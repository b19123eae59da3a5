"""Items × raters tables built from long-format ``Rating`` records, and join reports."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from attune_judge.calibration._results import JoinReport
from attune_judge.data import Preference, Rating
from attune_judge.errors import UserError

__all__ = ["RatingTable", "join_report", "one_label_per_rater", "ratings_to_table"]

Value = float | str | None
L = TypeVar("L", Rating, Preference)


def _num(v: object) -> float | str | None:
    """Numbers (and numeric strings) become floats; other strings stay; empty means missing."""
    if v is None:
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return None if np.isnan(v) else float(v)
    s = str(v).strip()
    if not s:
        return None
    try:
        return float(s)
    except ValueError:
        return s


@dataclass
class RatingTable:
    """Values of one dimension as an items × raters table (``None`` = not rated).

    Rows are sorted by item id and columns by rater, so nothing depends on input order.
    """

    items: list[str]
    """Item ids (rows)."""
    raters: list[str]
    """Rater names (columns)."""
    values: list[list[Value]]
    """``values[i][r]``: rater r's value on item i, a float, a category string or ``None``."""
    clusters: list[str]
    """Cluster of each item (the item id itself when no cluster was given)."""
    dimension: str = "overall"
    """The rated dimension."""
    groups: dict[str, str] = field(default_factory=dict)
    """Rater → rater group, where known."""
    weights: list[float] | None = None
    """Weight of each item (``1 / inclusion probability`` of a labelled sample, as frequency
    weights: α, κ and the pair agreements count an item ``w`` times); ``None``: unweighted."""

    @property
    def numeric(self) -> bool:
        """Whether every present value is a number."""
        return all(isinstance(v, float) for row in self.values for v in row if v is not None)

    def non_numeric_examples(self, limit: int = 5) -> list[str]:
        """``item/rater = value`` for the first non-numeric values."""
        out = []
        for i, row in enumerate(self.values):
            for r, v in enumerate(row):
                if isinstance(v, str):
                    out.append(f"{self.items[i]}/{self.raters[r]} = {v!r}")
                    if len(out) >= limit:
                        return out
        return out

    def column(self, rater: str) -> list[Value]:
        """One rater's values, item order."""
        j = self.raters.index(rater)
        return [row[j] for row in self.values]

    def subset(self, raters: Sequence[str]) -> RatingTable:
        """Table restricted to some raters (items keep their order; none are dropped)."""
        unknown = [r for r in raters if r not in self.raters]
        if unknown:
            raise UserError(f"unknown rater(s) {unknown}; known: {self.raters}")
        idx = [self.raters.index(r) for r in raters]
        return RatingTable(
            self.items,
            list(raters),
            [[row[j] for j in idx] for row in self.values],
            self.clusters,
            self.dimension,
            {r: g for r, g in self.groups.items() if r in raters},
            self.weights,
        )

    def n_raters_per_item(self) -> list[int]:
        """How many raters rated each item."""
        return [sum(v is not None for v in row) for row in self.values]

    def float_matrix(self, level: str = "interval") -> np.ndarray:
        """Items × raters float matrix (NaN = missing); UserError for non-numeric values."""
        if not self.numeric:
            raise UserError(
                f"dimension {self.dimension!r}: non-numeric values cannot be used at the "
                f"{level} level; use level 'nominal' or map categories to numbers",
                self.non_numeric_examples(),
            )
        return np.array(
            [[np.nan if v is None else v for v in row] for row in self.values], dtype=np.float64
        )


def ratings_to_table(
    ratings: Iterable[Rating], dimension: str | None = None, *, rater_field: str = "rater"
) -> RatingTable:
    """Pivot long ``Rating`` records of one dimension into a ``RatingTable``.

    Parameters
    ----------
    ratings
        Records; those of other dimensions are ignored when ``dimension`` is given.
    dimension
        Which dimension; required when the records hold several.
    rater_field
        ``rater`` (default) or ``rater_group`` to treat each group as one rater.

    Raises
    ------
    UserError
        No records for the dimension, several dimensions without choosing one, or the same
        rater rating the same item twice with different values (:func:`one_label_per_rater`).
    """
    recs = list(ratings)
    dims = sorted({r.dimension for r in recs})
    if dimension is None:
        if len(dims) > 1:
            raise UserError(f"the ratings hold several dimensions {dims[:10]}; choose one")
        dimension = dims[0] if dims else "overall"
    recs = [r for r in recs if r.dimension == dimension]
    if not recs:
        raise UserError(f"no ratings for dimension {dimension!r} (dimensions present: {dims[:10]})")
    recs = one_label_per_rater(recs, rater_field=rater_field)
    cells: dict[tuple[str, str], Value] = {}
    clusters: dict[str, str] = {}
    groups: dict[str, str] = {}
    for r in recs:
        who = r.rater if rater_field == "rater" else (r.rater_group or r.rater)
        key = (r.item_id, who)
        val = _num(r.value)
        if val is not None or key not in cells:
            cells[key] = val
        clusters.setdefault(r.item_id, r.cluster or r.item_id)
        if r.rater_group:
            groups.setdefault(who, r.rater_group)
    items = sorted(clusters)
    raters = sorted({k[1] for k in cells})
    values = [[cells.get((i, r)) for r in raters] for i in items]
    return RatingTable(items, raters, values, [clusters[i] for i in items], dimension, groups)


def _label_key(rec: Rating | Preference, rater_field: str) -> tuple[str, str, str]:
    who = rec.rater if rater_field == "rater" else (rec.rater_group or rec.rater)
    if isinstance(rec, Preference):
        return rec.item_id, who, rec.question
    return rec.item_id, who, rec.dimension


def _label_value(rec: Rating | Preference) -> Value:
    """A label's value as compared: a rating as a number (``"3"`` is 3), a choice as the option
    it names (A of (x, y) is B of (y, x)); ``None``: no label."""
    if isinstance(rec, Preference):
        if rec.winner is None or rec.winner == "tie":
            return rec.winner
        return rec.option_a if rec.winner == "A" else rec.option_b
    return _num(rec.value)


def _show(v: Value) -> str:
    return f"{v:g}" if isinstance(v, float) else repr(v)


def one_label_per_rater(
    records: Iterable[L],
    *,
    source: object | None = None,
    lines: Sequence[int] | None = None,
    rater_field: str = "rater",
) -> list[L]:
    """The one rule for duplicate human labels, in every command that reads them: a rater's
    label of an item counts once.

    The key is (item, rater, dimension) of a ``Rating`` and (item, rater, question) of a
    ``Preference``. An exact repeat (the same value: ``"3"`` and ``3`` are the same rating, a
    choice of A on (x, y) the same as B on (y, x)) is dropped, keeping the first; two different
    values are refused: the statistics would otherwise average or double-count a typo. A
    missing value (``null``) is no label and conflicts with nothing. ``source`` and ``lines``
    (the records' line numbers in it) name where the conflicting labels are.

    >>> from attune_judge.data import Rating
    >>> rs = [Rating(item_id="i1", rater="ann", value=v) for v in (3, "3", None)]
    >>> len(one_label_per_rater(rs))
    2
    >>> one_label_per_rater([*rs, Rating(item_id="i1", rater="ann", value=4)], source="h.jsonl")
    Traceback (most recent call last):
    ...
    attune_judge.errors.UserError: h.jsonl: rater 'ann' labelled item 'i1' (dimension ...) twice ...
    """
    seen: set[tuple[tuple[str, str, str], Value]] = set()
    first: dict[tuple[str, str, str], tuple[Value, int]] = {}
    out: list[L] = []
    conflicts: list[tuple[int, int, tuple[str, str, str], Value, Value]] = []
    for k, rec in enumerate(records):
        at = lines[k] if lines is not None else k + 1
        key, val = _label_key(rec, rater_field), _label_value(rec)
        if val is None:
            out.append(rec)
            continue
        if (key, val) in seen:
            continue
        seen.add((key, val))
        prev = first.setdefault(key, (val, at))
        if prev[0] != val:
            conflicts.append((prev[1], at, key, prev[0], val))
        out.append(rec)
    if conflicts:
        where = "line" if lines is not None else "record"
        first_at, at, (item, who, dim), a, b = conflicts[0]
        at_line = f":{at}" if lines is not None else ""
        prefix = "" if source is None else f"{source}{at_line}: "
        kind = "question" if isinstance(out[0], Preference) else "dimension"
        raise UserError(
            f"{prefix}rater {who!r} labelled item {item!r} ({kind} {dim!r}) twice with different "
            f"values: {_show(a)} ({where} {first_at}) and {_show(b)} ({where} {at}); keep one "
            f"(a rater's label of an item counts once; {len(conflicts)} such conflict(s))",
            [
                f"item {c[2][0]!r}, rater {c[2][1]!r}, {kind} {c[2][2]!r}: {_show(c[3])} "
                f"({where} {c[0]}) and {_show(c[4])} ({where} {c[1]})"
                for c in conflicts[1:6]
            ],
        )
    return out


def join_report(
    left_items: Iterable[str],
    right_items: Iterable[str],
    *,
    left_name: str = "human",
    right_name: str = "judge",
    require_match: bool = True,
) -> JoinReport:
    """Count items matched between two tables, with examples of those that do not match.

    Raises
    ------
    UserError
        When ``require_match`` and no item matches (with examples from both sides).
    """
    left, right = set(left_items), set(right_items)
    lo, ro = sorted(left - right), sorted(right - left)
    rep = JoinReport(
        left_name=left_name,
        right_name=right_name,
        matched=len(left & right),
        left_only=len(lo),
        right_only=len(ro),
        left_only_examples=lo[:5],
        right_only_examples=ro[:5],
    )
    if require_match and rep.matched == 0:
        raise UserError(
            f"no item id matches between the {left_name} and {right_name} labels "
            f"({len(left)} {left_name} items, {len(right)} {right_name} items)",
            [
                f"{left_name} ids look like: {lo[:3]}",
                f"{right_name} ids look like: {ro[:3]}",
            ],
        )
    return rep
