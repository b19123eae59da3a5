"""Small result models shared by the calibration layer (all serialise with ``model_dump()``)."""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from attune_judge._bootstrap import DEFAULT_LEVEL

__all__ = ["IntervalMethod", "JoinReport", "Metric", "ResultModel"]

IntervalMethod = Literal[
    "bca", "percentile", "studentized", "studentized_logit", "score", "mover", "none"
]


class ResultModel(BaseModel):
    """Base of every calibration result: unknown fields are rejected, numbers stay plain floats."""

    model_config = ConfigDict(extra="forbid")


_T = TypeVar("_T")


def kept(value: _T | None, missing: str) -> _T:
    """What a result keeps in memory only (replicates, weights: not serialised); a
    ``ValueError`` saying ``missing`` when it was not kept."""
    if value is None:
        raise ValueError(missing)
    return value


class Metric(ResultModel):
    """A statistic with its cluster-bootstrap confidence interval.

    ``estimate`` is ``None`` when the statistic is undefined on the data (for example
    Krippendorff's α when every value is identical); ``undefined_reason`` then says why.
    """

    name: str
    """What was computed (``spearman``, ``cohen_kappa_quadratic``, ``mean`` ...)."""
    estimate: float | None
    """The statistic on the full data; ``None`` when undefined."""
    lower: float | None = None
    """Lower end of the interval (``None`` when no interval could be computed)."""
    upper: float | None = None
    """Upper end of the interval."""
    level: float = DEFAULT_LEVEL
    """Confidence level of the interval (two-sided; 0.95 by default)."""
    method: IntervalMethod = "none"
    """Interval method actually used: ``bca``, ``percentile`` (also the fallback when BCa is
    undefined on degenerate data), ``studentized`` (symmetric bootstrap-t with the cluster-robust
    standard error; the default for means), ``studentized_logit`` (the same on the logit scale
    of a bounded score), ``score`` (Wilson score interval with the cluster design effect),
    ``mover`` (a difference of two bounded means from their intervals) or ``none``; see
    :mod:`attune_judge.calibration.resampling._bounded`."""
    requested_method: IntervalMethod = "bca"
    """Interval method that was asked for; differs from ``method`` after a fallback."""
    B: int = 0
    """Number of bootstrap replicates."""
    seed: int | None = None
    """Seed of the ``numpy.random.Generator`` that drew the cluster weights."""
    scheme: Literal["multinomial", "poisson"] = "multinomial"
    """Cluster weights: Multinomial(C, 1/C) (the classical bootstrap) or Poisson(1)."""
    n_clusters: int = 0
    """Number of clusters (resampling units, usually conversations)."""
    n: int = 0
    """Number of observations (items, turns or pairs) the estimate is based on."""
    mc_error_lower: float | None = None
    """Monte-Carlo standard error of the lower endpoint (order-statistic approximation)."""
    mc_error_upper: float | None = None
    """Monte-Carlo standard error of the upper endpoint."""
    n_undefined_replicates: int = 0
    """Replicates on which the statistic was undefined (dropped before taking quantiles)."""
    engine: Literal["vectorised", "loop"] = "vectorised"
    """How the replicates were computed: one matrix product, or a per-replicate loop."""
    undefined_reason: str | None = None
    """Why ``estimate`` is ``None``, when it is."""
    note: str | None = None
    """Anything else the reader must know (a fallback, a reduced B, ...)."""

    @property
    def defined(self) -> bool:
        """Whether the point estimate exists."""
        return self.estimate is not None


class JoinReport(ResultModel):
    """How two tables of labels matched on item id (and dimension)."""

    left_name: str
    """Name of the left table (``human``)."""
    right_name: str
    """Name of the right table (``judge``)."""
    matched: int
    """Items present on both sides."""
    left_only: int
    """Items only in the left table."""
    right_only: int
    """Items only in the right table."""
    left_only_examples: list[str]
    """Up to five item ids only in the left table."""
    right_only_examples: list[str]
    """Up to five item ids only in the right table."""
