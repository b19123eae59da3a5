"""Joining a judge's judgments with human ratings into the columns of a PPI leaderboard."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from attune_judge.calibration._results import ResultModel
from attune_judge.calibration.agreement._table import one_label_per_rater
from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.data import Judgment, Rating

__all__ = ["PPIColumns", "ppi_columns"]


class PPIColumns(ResultModel):
    """Judge scores joined with human labels, ready for :func:`ppi_leaderboard`."""

    models: list[str]
    clusters: list[str]
    judge: list[float]
    human: list[float | None]
    dimension: str
    """The human dimension used."""
    n_human_items: int
    """Items with a numeric human value on that dimension."""
    n_matched: int
    """Of those, items the judge scored (ok judgments)."""
    unmatched_examples: list[str]
    """Up to five human-labelled item ids the judge did not score."""
    weights: list[float | None] | None = None
    """Each row's label weight (``1 / inclusion probability``; ``None`` unlabelled), when
    ``weights`` were given."""


def ppi_columns(
    judgments: Sequence[Judgment],
    ratings: Sequence[Rating],
    *,
    field: Literal["normalized", "overall"] = "normalized",
    dimension: str | None = None,
    human_scale: tuple[float, float] | None = None,
    weights: Mapping[str, float] | None = None,
) -> PPIColumns:
    """Join ok judgments with human ratings by item id (raters averaged per item; a rater's
    label of an item counts once, two different ones are refused: :func:`one_label_per_rater`).

    Parameters
    ----------
    judgments
        The judge's judgments (``candidate_model`` is the model, ``conversation_id`` the
        cluster); failed ones are skipped.
    ratings
        Human ``Rating`` records; non-numeric and missing values are ignored.
    field
        Judge score used: ``normalized`` (0–1) or ``overall`` (rubric scale).
    dimension
        Human dimension; default ``overall`` if present, else the only dimension.
    human_scale
        ``(low, high)`` to map human values to 0–1 (``(v − low) / (high − low)``), so they
        share the judge's ``normalized`` scale.
    weights
        Item id → weight of its human label (``1 / inclusion probability``), for
        :func:`ppi_leaderboard`'s ``weights``.
    """
    dims = sorted({r.dimension for r in ratings})
    if dimension is None:
        if "overall" in dims or len(dims) == 1:
            dimension = "overall" if "overall" in dims else dims[0]
        else:
            raise UserError(f"human labels have several dimensions {dims[:8]}; choose one")
    if dimension not in dims:
        raise UserError(f"no human label on dimension {dimension!r}; dimensions: {dims[:8]}")
    values: dict[str, list[float]] = {}
    for r in one_label_per_rater([r for r in ratings if r.dimension == dimension]):
        if r.dimension != dimension or r.value is None or isinstance(r.value, str):
            continue
        v = float(r.value)
        if human_scale is not None:
            lo, hi = human_scale
            v = (v - lo) / (hi - lo)
        values.setdefault(r.item_id, []).append(v)
    means = {k: float(np.mean(v)) for k, v in values.items()}
    models: list[str] = []
    clusters: list[str] = []
    judge: list[float] = []
    human: list[float | None] = []
    seen: set[str] = set()
    ids: list[str] = []
    for j in judgments:
        val = j.normalized if field == "normalized" else j.overall
        if j.status != "ok" or val is None or j.candidate_model is None or j.item_id in seen:
            continue
        seen.add(j.item_id)
        ids.append(j.item_id)
        models.append(j.candidate_model)
        clusters.append(j.conversation_id or j.item_id)
        judge.append(float(val))
        human.append(means.get(j.item_id))
    unmatched = sorted(set(means) - seen)
    return PPIColumns(
        models=models,
        clusters=clusters,
        judge=judge,
        human=human,
        dimension=dimension,
        n_human_items=len(means),
        n_matched=len(means) - len(unmatched),
        unmatched_examples=unmatched[:5],
        weights=None
        if weights is None
        else [None if h is None else weights[i] for i, h in zip(ids, human, strict=True)],
    )
