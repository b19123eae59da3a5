"""Tidy score tables: one row per (variant, model, conversation, turn), plain numpy columns.

The analysis functions of this package take these tables and nothing else, so they work on
scores from any source (a sensitivity run, recorded judgments, simulated data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Self

import numpy as np
from numpy.typing import NDArray

__all__ = ["CriterionTable", "ScoreTable"]

FloatArray = NDArray[np.float64]
StrArray = NDArray[np.str_]


def _strings(values: Sequence[object]) -> StrArray:
    return np.asarray([str(v) for v in values], dtype=np.str_)


def _check_lengths(name: str, **columns: np.ndarray) -> None:
    lengths = {k: len(v) for k, v in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{name}: columns have different lengths {lengths}")


class _LongTable:
    """What both long tables share: a constructor from columns and their length."""

    score: FloatArray

    @classmethod
    def from_columns(
        cls,
        variant: Sequence[object],
        model: Sequence[object],
        conversation: Sequence[object],
        key: Sequence[object],
        score: Sequence[float] | FloatArray,
    ) -> Self:
        """Build from equally long columns (values are converted to strings / floats);
        ``key`` is the turn (:class:`ScoreTable`) or the criterion (:class:`CriterionTable`)."""
        labels = [_strings(c) for c in (variant, model, conversation, key)]
        values = np.asarray(score, dtype=np.float64)
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        _check_lengths(cls.__name__, **dict(zip(names, [*labels, values], strict=True)))
        return cls(*labels, values)  # type: ignore[call-arg]  # the subclasses' five fields

    def __len__(self) -> int:
        return len(self.score)


@dataclass(frozen=True)
class ScoreTable(_LongTable):
    """Overall scores in long form; ``score`` is NaN for a missing or failed judgment.

    Scores of different variants are compared directly, so they must be on one scale: use
    the normalised [0, 1] score when variants change the rubric's scale.
    """

    variant: StrArray
    """Variant name per row (the base variant included)."""
    model: StrArray
    """Candidate model per row."""
    conversation: StrArray
    """Conversation id per row (the resampling cluster)."""
    turn: StrArray
    """Turn (or item) id inside the conversation per row."""
    score: FloatArray
    """The score (NaN = missing)."""

    @property
    def variants(self) -> list[str]:
        """Variant names in order of first appearance."""
        return list(dict.fromkeys(self.variant.tolist()))

    @property
    def models(self) -> list[str]:
        """Model names, sorted."""
        return sorted(set(self.model.tolist()))

    @property
    def conversations(self) -> list[str]:
        """Conversation ids, sorted."""
        return sorted(set(self.conversation.tolist()))


@dataclass(frozen=True)
class CriterionTable(_LongTable):
    """Per-criterion scores in long form, each mapped to [0, 1] by its own variant's scale."""

    variant: StrArray
    """Variant name per row."""
    model: StrArray
    """Candidate model per row."""
    conversation: StrArray
    """Conversation id per row."""
    criterion: StrArray
    """Criterion id per row."""
    score: FloatArray
    """Normalised criterion score (NaN = missing)."""
