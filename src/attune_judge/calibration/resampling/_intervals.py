"""Bootstrap intervals from replicates: percentile, BCa and the symmetric studentized interval.

These turn the replicates of a statistic (drawn by :mod:`._bootstrap`) into endpoints with their
Monte-Carlo errors. BCa (bias-corrected and accelerated, Efron 1987) takes its acceleration from
the jackknife over clusters and falls back to percentile when it is undefined (all replicates on
one side of the estimate, constant replicates, undefined jackknife values); the method that was
actually used is recorded. Undefined (NaN) replicates are dropped and counted; above
:data:`MAX_UNDEFINED_SHARE` no interval is reported. An interval never excludes its own
estimate: when it would (more than 1 − α/2 of the replicates on one side of the estimate,
where BCa's adjusted levels and the percentile ones both pass it) none is reported
(:data:`OFF_ESTIMATE`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod

__all__ = [
    "DEGENERATE",
    "MAX_UNDEFINED_SHARE",
    "OFF_ESTIMATE",
    "ZERO_WIDTH",
    "Endpoints",
    "FloatArray",
    "interval_endpoints",
    "is_zero_width",
    "join_notes",
    "percentile_metric",
    "studentized_endpoints",
]

FloatArray = NDArray[np.float64]

DEGENERATE = "no interval: degenerate replicates"
"""Note of a studentized interval whose ``|t*|`` quantile is infinite."""

OFF_ESTIMATE = (
    "no interval: the bootstrap replicates lie (almost) all on one side of the estimate, so "
    "the interval would exclude it (too few or too alike conversations)"
)
"""Note of a statistic whose percentile interval would exclude its estimate."""

ZERO_WIDTH = "degenerate: zero-width interval (every resample gives the same value)"
"""Note of an interval whose ends coincide: it shows no uncertainty, not certainty."""

MAX_UNDEFINED_SHARE = 0.10
"""Largest share of undefined bootstrap replicates with which an interval is still reported.

Replicates on which a statistic is undefined (a correlation of a resample with no variation,
α of a resample without pairable values ...) are dropped before taking quantiles; the interval
then describes only the draws where the statistic exists and is too narrow. Up to this share the
interval is reported with a note giving the share; above it no interval is reported."""


ZERO_WIDTH_TOLERANCE = 1e-9
"""Relative width (of the larger end, at least 1) below which an interval is zero-width:
resampled means of identical values differ from each other by rounding only."""


def is_zero_width(lower: float | None, upper: float | None) -> bool:
    """Whether an interval's ends coincide up to rounding (:data:`ZERO_WIDTH_TOLERANCE`):
    ``[0.0, 5.6e-17]`` is as degenerate as ``[0.0, 0.0]``."""
    if lower is None or upper is None or not (np.isfinite(lower) and np.isfinite(upper)):
        return False
    return abs(upper - lower) <= ZERO_WIDTH_TOLERANCE * max(1.0, abs(lower), abs(upper))


@dataclass(frozen=True)
class Endpoints:
    """Interval endpoints for one statistic, with the method used and Monte-Carlo errors."""

    lower: float | None
    upper: float | None
    method: IntervalMethod
    mc_error_lower: float | None
    mc_error_upper: float | None
    n_undefined: int
    note: str | None = None
    """Why the interval is missing, that replicates were dropped, or that BCa fell back."""

    @classmethod
    def missing(cls, n_undefined: int, note: str | None = None) -> Endpoints:
        """No interval (``method`` ``none``), with the undefined replicates and why."""
        return cls(None, None, "none", None, None, n_undefined, note)

    def metric_fields(self) -> dict[str, Any]:
        """The fields of a :class:`~attune_judge.calibration.Metric` these endpoints fill
        (bounds, method used, Monte-Carlo errors, undefined replicates)."""
        return {
            "lower": self.lower,
            "upper": self.upper,
            "method": self.method,
            "mc_error_lower": self.mc_error_lower,
            "mc_error_upper": self.mc_error_upper,
            "n_undefined_replicates": self.n_undefined,
        }


def _mc_positions(n: int, q: float) -> list[int]:
    """Order statistics (0-based) at ±1 binomial SE around the q-quantile of n replicates."""
    k = q * (n - 1)
    d = np.sqrt(n * q * (1 - q))
    return [int(np.clip(np.floor(k - d), 0, n - 1)), int(np.clip(np.ceil(k + d), 0, n - 1))]


def _quantiles_and_mc_errors(
    values: FloatArray, qs: list[float]
) -> tuple[list[float], list[float]]:
    """The ``qs`` quantiles of ``values`` (numpy's linear rule) and their Monte-Carlo SEs: half
    the spread of the order statistics ±1 binomial SE around each. Selects those order
    statistics (``np.partition``) instead of sorting all replicates: the same values."""
    positions = [_mc_positions(len(values), q) for q in qs]
    part = np.partition(values, sorted({i for pair in positions for i in pair}))
    quantiles = np.quantile(part, qs)
    mc = [float((part[hi] - part[lo]) / 2) for lo, hi in positions]
    return [float(x) for x in quantiles], mc


def _bca_quantiles(
    estimate: float, reps: FloatArray, jack: FloatArray | None, level: float
) -> tuple[float, float] | str:
    """Adjusted quantile levels of BCa, or why BCa is undefined on this data."""
    if jack is None or len(jack) < 2:
        return "no jackknife (fewer than three clusters)"
    if not np.all(np.isfinite(jack)):
        return "the statistic is undefined when some cluster is left out"
    B = len(reps)
    tie = 1e-12 * max(1.0, abs(estimate))  # replicates equal to θ̂ up to rounding
    p = (np.sum(reps < estimate - tie) + 0.5 * np.sum(np.abs(reps - estimate) <= tie)) / B
    if np.ptp(reps) == 0:
        return "all replicates are equal"
    if p <= 0 or p >= 1:
        return "all replicates lie on one side of the estimate"
    from scipy import special  # here, not at import: every run command imports this module

    z0 = float(special.ndtri(p))  # the normal quantile (norm.ppf without its overhead)
    dev = jack.mean() - jack
    ss = float(np.sum(dev**2))
    denom = 6 * ss**1.5
    with np.errstate(all="ignore"):
        a = float(np.sum(dev**3) / denom) if denom > 0 else 0.0
    if not np.isfinite(a):
        return "the acceleration is undefined"
    alpha = 1 - level
    out = []
    for z in (special.ndtri(alpha / 2), special.ndtri(1 - alpha / 2)):
        denom = 1 - a * (z0 + z)
        if denom <= 0:
            return "the bias and acceleration are too large"
        out.append(float(special.ndtr(z0 + (z0 + z) / denom)))
    if not all(np.isfinite(out)):
        return "the adjusted quantiles are undefined"
    return out[0], out[1]


def interval_endpoints(
    estimate: float | None,
    reps: FloatArray,
    *,
    level: float = DEFAULT_LEVEL,
    method: IntervalMethod = "bca",
    jackknife: FloatArray | None = None,
    max_undefined: float = MAX_UNDEFINED_SHARE,
) -> Endpoints:
    """Percentile or BCa endpoints of one statistic from its bootstrap replicates.

    NaN replicates (statistic undefined on that draw) are dropped and counted; when more than
    ``max_undefined`` of them are undefined no interval is given (see
    :data:`MAX_UNDEFINED_SHARE`). BCa falls back to percentile when undefined;
    ``Endpoints.method`` says which was used and ``Endpoints.note`` why.
    """
    reps = np.asarray(reps, dtype=np.float64)
    finite = reps[np.isfinite(reps)]
    n_undef = int(len(reps) - len(finite))
    share = n_undef / len(reps) if len(reps) else 0.0
    if estimate is None or not np.isfinite(estimate) or len(finite) == 0 or method == "none":
        return Endpoints.missing(n_undef)
    notes = []
    if n_undef:
        if share > max_undefined:
            return Endpoints.missing(
                n_undef,
                f"no interval: the statistic is undefined on {n_undef} of {len(reps)} bootstrap "
                f"replicates ({share:.0%}, more than {max_undefined:.0%}); an interval from the "
                "others would describe only the draws where it exists",
            )
        notes.append(
            f"{n_undef} of {len(reps)} bootstrap replicates ({share:.1%}) undefined and dropped"
        )
    alpha = 1 - level
    q_lo, q_hi = alpha / 2, 1 - alpha / 2
    used: IntervalMethod = "percentile"
    if method == "bca":
        adj = _bca_quantiles(float(estimate), finite, jackknife, level)
        if isinstance(adj, str):
            notes.append(f"BCa undefined ({adj}): percentile interval")
        else:
            q_lo, q_hi = adj
            used = "bca"
    (lo, hi), (mc_lo, mc_hi) = _quantiles_and_mc_errors(finite, [q_lo, q_hi])
    tie = 1e-12 * max(1.0, abs(float(estimate)))  # equal to the estimate up to rounding
    if not lo - tie <= estimate <= hi + tie:
        return Endpoints.missing(n_undef, join_notes(*notes, OFF_ESTIMATE))
    if is_zero_width(lo, hi):
        notes.append(ZERO_WIDTH)
    return Endpoints(
        lo,
        hi,
        used,
        mc_lo,
        mc_hi,
        n_undef,
        "; ".join(notes) or None,
    )


def join_notes(*notes: str | None) -> str | None:
    """Non-empty notes joined by ``; `` (``None`` when there are none)."""
    kept = [n for n in notes if n]
    return "; ".join(kept) or None


def studentized_endpoints(
    estimate: float | None,
    se: float | None,
    tstar: FloatArray,
    *,
    level: float = DEFAULT_LEVEL,
    max_undefined: float = MAX_UNDEFINED_SHARE,
) -> Endpoints:
    """Symmetric bootstrap-t interval ``θ̂ ± q·SE`` with q the ``level`` quantile of ``|t*|``.

    ``t* = (θ* − θ̂) / SE*`` per replicate, SE* the replicate's own cluster-robust standard
    error; NaN entries (undefined replicates) are dropped and counted as in
    :func:`interval_endpoints`; ±inf (a replicate with zero spread) count as large values.
    """
    t = np.abs(np.asarray(tstar, dtype=np.float64))
    defined = t[~np.isnan(t)]
    n_undef = int(len(t) - len(defined))
    share = n_undef / len(t) if len(t) else 0.0
    if (
        estimate is None
        or se is None
        or not np.isfinite(estimate)
        or not np.isfinite(se)
        or len(defined) == 0
    ):
        return Endpoints.missing(n_undef)
    note = None
    if n_undef:
        if share > max_undefined:
            return Endpoints.missing(
                n_undef,
                f"no interval: the statistic is undefined on {n_undef} of {len(t)} bootstrap "
                f"replicates ({share:.0%}, more than {max_undefined:.0%})",
            )
        note = f"{n_undef} of {len(t)} bootstrap replicates ({share:.1%}) undefined and dropped"
    with np.errstate(invalid="ignore"):
        (q,), (mc_q,) = _quantiles_and_mc_errors(defined, [level])
    if not np.isfinite(q):
        return Endpoints.missing(n_undef, DEGENERATE)
    mc = mc_q * se if np.all(np.isfinite(defined)) else None
    if q * se == 0 or is_zero_width(estimate - q * se, estimate + q * se):
        note = join_notes(note, ZERO_WIDTH)
    return Endpoints(
        float(estimate - q * se), float(estimate + q * se), "studentized", mc, mc, n_undef, note
    )


def percentile_metric(
    name: str,
    estimate: float | None,
    reps: FloatArray,
    *,
    level: float,
    B: int,
    seed: int,
    n_clusters: int,
    n: int,
    withhold: str | None = None,
) -> Any:
    """A :class:`~attune_judge.calibration.Metric` with the percentile interval of ``reps``;
    ``withhold`` drops the interval and says why (in ``note``)."""
    from attune_judge.calibration._results import Metric

    ends = interval_endpoints(estimate, reps, level=level, method="percentile")
    fields = ends.metric_fields()
    if withhold is not None:
        fields.update(lower=None, upper=None, method="none")
    return Metric(
        name=name,
        estimate=estimate,
        **fields,
        level=level,
        requested_method="percentile",
        B=B,
        seed=seed,
        n_clusters=n_clusters,
        n=n,
        note=withhold or ends.note,
    )
