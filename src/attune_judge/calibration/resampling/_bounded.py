"""Intervals for means of bounded scores: pass/fail checks and ratings piled up at a ceiling.

A mean of scores on ``[lo, hi]`` near a bound has a skewed sampling distribution and a
standard error that shrinks with the distance to the bound, so the symmetric studentized
interval ``θ̂ ± q·SE`` on the raw scale under-covers (simulated: 59–86% for pass rates of
0.90–0.95 at 10 conversations) and can leave ``[lo, hi]``. With ``bounds`` known:

- **Pass/fail means** (every value ``lo`` or ``hi``): the **Wilson score interval with the
  cluster design effect** (Korn & Graubard 1998): effective sample size
  ``n_eff = x̂(1 − x̂)/v̂`` (``x = (θ − lo)/(hi − lo)``, v̂ the cluster-robust variance of x̂),
  scaled by ``(z/t_{df})²`` for the degrees of freedom of v̂, ``df = C_eff − 1`` with
  ``C_eff = (Σ n_c)²/Σ n_c²`` Kish's effective number of conversations (``C`` when all are
  equally long). With unequal lengths (1 + Geometric(1/8) turns, at most 40) the cluster-robust
  variance rests on fewer effective conversations than C: with ``t_{C−1}`` the interval covered
  91.6–92.6% at 10 and 15 conversations (pass rates 0.5–0.76), with ``t_{C_eff−1}``
  94.2–96.8% (``benchmarks/coverage_unequal_lengths.py``). ``C_eff − 1`` is the Satterthwaite
  degrees of freedom of the cluster-robust variance of a mean when turns within a conversation
  are uncorrelated (the effective number of clusters of Carter, Schnepel & Steigerwald 2017
  at zero intra-cluster correlation; their correlation-one version, ``(Σ n_c²)²/Σ n_c⁴``,
  over-covered: 96–98.5%). When every score is at
  the bound, v̂ = 0 says nothing about the correlation within conversations: ``n_eff`` is then
  Kish's effective number of conversations ``(Σ n_c)²/Σ n_c²`` (as if all turns of a
  conversation were one observation), and the note starts with :data:`AT_BOUND` — no method
  can promise coverage there.
- **Rating means**: the symmetric studentized cluster bootstrap on the **logit scale** of x,
  a variance-stabilising, range-respecting transform (DiCiccio & Efron 1996; Davison &
  Hinkley 1997, §5.2.2): ``t* = (g(θ*) − g(θ̂)) / (g'(θ*)·SE*)``, interval
  ``g⁻¹(g(θ̂) ± q·g'(θ̂)·SE)``; a replicate at a bound counts as a large ``|t*|``. It is
  widened to contain the raw-scale studentized interval (clipped to the bounds): with 65–78%
  of the ratings at the top and 10 conversations, the logit interval alone covered 93.0%
  pooled over four models (worst model 91.7%), the raw one 93.6%, their union 94.4% (worst
  93.8%; ``test_coverage.py``). Where the logit interval is undefined (the estimate at a
  bound, or more than ``1 − level`` of the replicates at one): the Wilson interval above.
- **Differences** ``θ_j − θ_k``: MOVER (method of variance estimates recovery, Zou & Donner
  2008; Newcombe 1998 for paired proportions) from the two means' intervals and the
  cluster-robust correlation of the two means.

Coverage in seeded simulations is in ``tests/calibration/test_coverage.py`` and the README.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration._results import Metric
from attune_judge.calibration.resampling._intervals import (
    DEGENERATE,
    ZERO_WIDTH,
    Endpoints,
    FloatArray,
    join_notes,
    studentized_endpoints,
)
from attune_judge.errors import UserError

__all__ = [
    "AT_BOUND",
    "Bounds",
    "bounded_mean_endpoints",
    "check_bounds",
    "check_level",
    "infer_bounds",
    "interval_warnings",
    "is_binary",
    "kish_clusters",
    "mover_endpoints",
    "wilson_cluster_endpoints",
]

Bounds = tuple[float, float]

AT_BOUND = "every score is at the bound"
"""Start of the note of an interval whose scores all sit at one bound (coverage not promised)."""


def check_level(level: float, name: str = "level") -> None:
    """UserError unless ``0 < level < 1`` (``95`` is a percentage, not a level); ``name`` is
    the option or argument named in the message."""
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        hint = (
            f" (did you mean {level / 100:g}?)"
            if isinstance(level, int | float) and 1 < level < 100
            else " (a level of measurement is `measurement=`)"
            if level in ("nominal", "ordinal", "interval", "ratio")
            else ""
        )
        raise UserError(
            f"{name} is a confidence level between 0 and 1 (e.g. 0.95), not {level!r}{hint}"
        )


def interval_warnings(metrics: Sequence[Metric]) -> list[str]:
    """One line per interval that cannot promise its coverage: every score at a bound (the
    design effect unknown) or a zero-width (degenerate) interval."""
    out = []
    for m in metrics:
        label = m.name.removeprefix("mean[").removesuffix("]")
        parts = (m.note or "").split("; ")
        at = [p for p in parts if p.startswith(AT_BOUND)]
        if at:
            out.append(
                f"{label}: {at[0]} — its interval treats each conversation as one observation "
                "(the design effect cannot be estimated); coverage is not guaranteed"
            )
        elif ZERO_WIDTH in parts:
            out.append(f"{label}: {ZERO_WIDTH}")
    return out


def infer_bounds(values: FloatArray) -> Bounds | None:
    """``(0, 1)`` when every finite value is 0 or 1 (pass/fail scores), else ``None``."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) and bool(np.all((v == 0.0) | (v == 1.0))):
        return (0.0, 1.0)
    return None


def check_bounds(bounds: Bounds | None, sums: FloatArray, counts: FloatArray) -> None:
    """ValueError when ``bounds`` are not ``lo < hi`` or a cluster mean lies outside them."""
    if bounds is None:
        return
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with lower < upper, not {bounds}")
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    tol = 1e-9 * (hi - lo)
    bad = (counts > 0) & ((means < lo - tol) | (means > hi + tol))
    if bad.any():
        raise ValueError(f"scores outside the bounds [{lo:g}, {hi:g}]")


def kish_clusters(counts: FloatArray) -> FloatArray:
    """Kish's effective number of clusters per label, ``(Σ_c n_cm)² / Σ_c n_cm²``."""
    n = np.asarray(counts, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(n.sum(0) ** 2 / (n * n).sum(0), dtype=np.float64)


@lru_cache(maxsize=256)
def _z(level: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


@lru_cache(maxsize=1024)
def _t(level: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, df))


def wilson_cluster_endpoints(
    estimate: float,
    variance: float,
    bounds: Bounds,
    *,
    n_clusters: int,
    kish: float,
    level: float = DEFAULT_LEVEL,
    note: str | None = None,
) -> Endpoints:
    """Wilson score interval with the cluster design effect (see the module notes)."""
    lo, hi = bounds
    width = hi - lo
    x = (estimate - lo) / width
    v = variance / width**2
    tol = 1e-12
    at_bound = x <= tol or x >= 1 - tol
    if at_bound or not (np.isfinite(v) and v > 0):
        neff = kish
        side = lo if x <= 0.5 else hi
        note = join_notes(
            note,
            f"{AT_BOUND} {side:g}" if at_bound else "the scores have no spread",
            "Wilson score interval with each conversation as one observation (the design "
            "effect cannot be estimated); coverage is not guaranteed",
        )
        x = min(max(x, 0.0), 1.0)
    else:
        neff = x * (1 - x) / v
        note = join_notes(
            note, f"Wilson score interval with the cluster design effect (n_eff = {neff:.1f})"
        )
    z = _z(level)
    if n_clusters >= 2:
        # degrees of freedom of v̂: Kish's effective number of conversations − 1 (C − 1 when
        # every conversation is as long as the others; fewer when lengths differ); without a
        # v̂ (every score at the bound) n_eff is already Kish's count: C − 1 as before
        c_eff = float(n_clusters) if at_bound or not (np.isfinite(v) and v > 0) else kish
        neff *= (z / _t(level, min(float(n_clusters), c_eff) - 1)) ** 2
    d = 1 + z * z / neff
    centre = (x + z * z / (2 * neff)) / d
    half = z / d * np.sqrt(max(x * (1 - x), 0.0) / neff + z * z / (4 * neff * neff))
    lower = max(0.0, centre - half)
    upper = min(1.0, centre + half)
    return Endpoints(lo + width * lower, lo + width * upper, "score", None, None, 0, note)


def bounded_mean_endpoints(
    estimate: float | None,
    se: float | None,
    reps: FloatArray,
    rep_sd: FloatArray,
    bounds: Bounds,
    *,
    n_clusters: int,
    kish: float,
    level: float = DEFAULT_LEVEL,
    binary: bool = False,
    raw: Endpoints | None = None,
) -> Endpoints:
    """The interval of a bounded mean (see the module notes).

    ``reps`` are the replicate means, ``rep_sd`` each replicate's cluster-robust SE;
    ``binary``: pass/fail scores (the Wilson interval with the design effect); ``raw``: the
    raw-scale studentized interval, whose union with the logit-scale one is returned.
    """
    if estimate is None or se is None or not np.isfinite(estimate) or not np.isfinite(se):
        return Endpoints.missing(int(np.sum(np.isnan(reps))))
    if binary:
        return wilson_cluster_endpoints(
            estimate, se * se, bounds, n_clusters=n_clusters, kish=kish, level=level
        )
    ends = _logit_endpoints(estimate, se, reps, rep_sd, bounds, n_clusters, kish, level)
    if (
        raw is None
        or raw.method != "studentized"
        or None in (raw.lower, raw.upper, ends.lower, ends.upper)
    ):
        return ends
    lower = max(min(float(ends.lower), float(raw.lower)), bounds[0])  # type: ignore[arg-type]
    upper = min(max(float(ends.upper), float(raw.upper)), bounds[1])  # type: ignore[arg-type]
    if (lower, upper) == (ends.lower, ends.upper):
        return ends
    note = join_notes(ends.note, "widened to the raw-scale studentized interval")
    return replace(ends, lower=lower, upper=upper, note=note)


def is_binary(
    sums: FloatArray, counts: FloatArray, bounds: Bounds, extremes: FloatArray | None = None
) -> bool:
    """Whether a label's scores are pass/fail: every value is ``lo`` or ``hi``.

    ``extremes`` (a label's row of ``ClusterSums.extremes``: min, max, two-valued) decides
    exactly. Without it (sums built by hand) the sums decide: every cluster's
    ``(S − lo·n)/(hi − lo)`` (its number of passes) is a whole number — ratings pass this by
    chance with probability about ``(1/steps)^C`` (a 1–5 scale, 10 conversations: 1e-6)."""
    lo, hi = bounds
    if extremes is not None:
        vmin, vmax, two = (float(v) for v in extremes)
        return bool(two == 1.0 and vmin in (lo, hi) and vmax in (lo, hi))
    k = (np.asarray(sums) - lo * np.asarray(counts)) / (hi - lo)
    present = np.asarray(counts) > 0
    return bool(
        present.any() and np.all(np.abs(k - np.round(k))[present] <= 1e-9 * (1 + k[present]))
    )


def _logit_endpoints(
    estimate: float,
    se: float,
    reps: FloatArray,
    rep_sd: FloatArray,
    bounds: Bounds,
    n_clusters: int,
    kish: float,
    level: float,
) -> Endpoints:
    """Logit-scale studentized interval; Wilson (design effect) where it is undefined.

    Ratings without any spread inside the range (every conversation's mean the same) get the
    zero-width interval every resample gives, marked :data:`ZERO_WIDTH`: a Bernoulli variance
    would be an invention there."""
    lo, hi = bounds
    width = hi - lo
    x = (estimate - lo) / width
    if 0 < x < 1 and se == 0:
        return Endpoints(estimate, estimate, "studentized_logit", None, None, 0, ZERO_WIDTH)
    if 0 < x < 1 and se > 0:
        xs = (np.asarray(reps, dtype=np.float64) - lo) / width
        with np.errstate(invalid="ignore", divide="ignore"):
            g = np.log(xs / (1 - xs))
            gp = 1 / (xs * (1 - xs))  # d logit / dx
            dev = g - np.log(x / (1 - x))
            t = dev / (gp * np.asarray(rep_sd) / width)
        t[dev == 0] = 0.0
        t[np.isfinite(xs) & ((xs <= 0) | (xs >= 1))] = np.inf  # a replicate at a bound
        t[np.isfinite(dev) & np.isnan(t)] = np.inf  # no spread in the replicate
        se_g = se / width / (x * (1 - x))
        ends = studentized_endpoints(float(np.log(x / (1 - x))), se_g, t, level=level)
        if ends.method == "studentized" and ends.lower is not None and ends.upper is not None:
            back = [lo + width / (1 + np.exp(-e)) for e in (ends.lower, ends.upper)]
            mc = [
                None if m is None else float(m * width * x * (1 - x))
                for m in (ends.mc_error_lower, ends.mc_error_upper)
            ]
            return Endpoints(
                float(back[0]),
                float(back[1]),
                "studentized_logit",
                mc[0],
                mc[1],
                ends.n_undefined,
                ends.note,
            )
        if ends.note != DEGENERATE:
            return ends  # too many undefined replicates: no interval
        note = "logit-scale studentized interval undefined (too many replicates at a bound)"
    else:
        note = None
    return wilson_cluster_endpoints(
        estimate, se * se, bounds, n_clusters=n_clusters, kish=kish, level=level, note=note
    )


def mover_endpoints(
    est_j: float | None,
    ends_j: Endpoints,
    est_k: float | None,
    ends_k: Endpoints,
    corr: float,
) -> Endpoints:
    """MOVER interval of ``θ_j − θ_k`` from the two means' intervals (Zou & Donner 2008)."""
    if (
        est_j is None
        or est_k is None
        or None in (ends_j.lower, ends_j.upper, ends_k.lower, ends_k.upper)
    ):
        return Endpoints.missing(0, join_notes(ends_j.note, ends_k.note))
    lj, uj = float(ends_j.lower), float(ends_j.upper)  # type: ignore[arg-type]
    lk, uk = float(ends_k.lower), float(ends_k.upper)  # type: ignore[arg-type]
    r = corr if np.isfinite(corr) else 0.0
    d = est_j - est_k
    a, b = est_j - lj, uk - est_k
    lower = d - np.sqrt(max(a * a + b * b - 2 * r * a * b, 0.0))
    a, b = uj - est_j, est_k - lk
    upper = d + np.sqrt(max(a * a + b * b - 2 * r * a * b, 0.0))
    at_bound = [e.note for e in (ends_j, ends_k) if e.note and AT_BOUND in e.note]
    note = join_notes(
        "MOVER from the two means' intervals (Zou & Donner 2008)",
        *(f"a mean's interval: {n}" for n in at_bound),
    )
    return Endpoints(float(lower), float(upper), "mover", None, None, 0, note)
