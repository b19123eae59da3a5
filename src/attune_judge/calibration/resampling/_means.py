"""Paired cluster bootstrap of per-label means (models, questions, ...) with covariance."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray
from pydantic import PrivateAttr

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel, kept
from attune_judge.calibration.resampling._bootstrap import (
    DEGENERATE,
    SINGLE_CLUSTER,
    Endpoints,
    FloatArray,
    bootstrap_weights,
    interval_endpoints,
    join_notes,
    studentized_endpoints,
)
from attune_judge.calibration.resampling._bounded import (
    Bounds,
    bounded_mean_endpoints,
    check_bounds,
    infer_bounds,
    is_binary,
    kish_clusters,
)
from attune_judge.calibration.resampling._ratio import (
    ROUNDING,
    ClusterSums,
    cluster_robust_covariance,
    ratio_replicate_variances,
    ratio_replicates,
)

__all__ = [
    "IMPLAUSIBLE_WIDTH",
    "PairedBootstrapResult",
    "bootstrap_means",
    "cluster_mean_range",
    "label_endpoints",
    "paired_cluster_bootstrap",
    "studentized_or_percentile",
]


IMPLAUSIBLE_WIDTH = 3
"""A studentized interval wider than this many times the range of the cluster means is
replaced by the percentile interval (and says so): at 10 conversations a legitimate one is
rarely wider than the range itself."""


class PairedBootstrapResult(ResultModel):
    """Means per label with paired cluster-bootstrap intervals and two covariance estimates."""

    labels: list[str]
    """Labels (models, questions ...) in the order of every matrix below."""
    means: list[Metric]
    """One ratio-estimator mean per label, with its interval."""
    covariance_bootstrap: list[list[float]]
    """Covariance of the bootstrap replicates of the means (M × M)."""
    covariance_closed_form: list[list[float]]
    """Cluster-robust covariance ``UᵀU / (C(C−1))`` (M × M), the cross-check."""
    n_clusters: int
    """Number of clusters."""
    B: int
    """Number of replicates."""
    seed: int
    """Seed of the cluster weights."""
    level: float
    """Confidence level."""

    _replicates: FloatArray | None = PrivateAttr(default=None)
    _weights: FloatArray | None = PrivateAttr(default=None)

    @property
    def replicates(self) -> FloatArray:
        """The ``(B × M)`` replicate means (not serialised)."""
        return kept(self._replicates, "replicates were not kept")

    @property
    def weights(self) -> FloatArray:
        """The ``(B × C)`` cluster weights used (not serialised)."""
        return kept(self._weights, "weights were not kept")

    @property
    def estimates(self) -> FloatArray:
        """Point estimates as an array (NaN where undefined)."""
        return np.array([np.nan if m.estimate is None else m.estimate for m in self.means])


def paired_cluster_bootstrap(
    sums: ClusterSums,
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    scheme: str = "multinomial",
    method: IntervalMethod = "studentized",
    weights: FloatArray | None = None,
    bounds: Bounds | None = None,
) -> PairedBootstrapResult:
    """Bootstrap every label's mean on the same cluster draws.

    Parameters
    ----------
    sums
        Per-cluster sums and counts (``ClusterSums.from_long``).
    B, level, seed, scheme, method
        Replicates (``DEFAULT_B``, 2,000, by default), confidence level (95%), seed, weight scheme
        (``multinomial`` or ``poisson``), interval method: ``studentized`` (default: symmetric
        bootstrap-t, ``θ̂ ± q·SE`` with SE the cluster-robust standard error and q the
        ``level`` quantile of ``|θ* − θ̂| / SE*`` over replicates, each with its own SE*),
        ``bca`` or ``percentile``.
    weights
        A ``(B × C)`` weights matrix to reuse (to pair with another bootstrap); overrides
        ``B``, ``seed`` and ``scheme``.
    bounds
        ``(lo, hi)`` of the scores (``(0, 1)`` for normalised or pass/fail scores): the
        studentized interval is then taken on the logit scale, with the Wilson score interval
        with the cluster design effect where that is undefined (:mod:`._bounded`), so it stays
        inside the bounds and keeps its coverage near them.

    Returns
    -------
    PairedBootstrapResult
        With ``replicates`` and ``weights`` available as properties.

    Notes
    -----
    A label with no observation at all (a column of zero counts, possible when ``sums`` is
    built by hand or sliced) has no mean: its ``Metric`` has ``estimate=None`` and an
    ``undefined_reason``, and its row and column of both covariance matrices are NaN. A
    replicate in which a label has no observation is NaN for that label and counted in
    ``n_undefined_replicates``; the bootstrap covariance uses the replicates in which every
    observed label is defined (NaN when fewer than two are). No numpy warning is emitted.

    Why studentized by default: in seeded simulations with 10 and 15 conversations (Likert and
    skewed scores, unequal conversation lengths) percentile and BCa intervals of a mean covered
    87–91% at a nominal 95%, a t(C−1) interval with the cluster-robust SE 91.9–93.8%, the
    symmetric studentized bootstrap 93.2–94.7% (1,500 data sets per cell); at 60 conversations
    all are close to 95%. ``tests/calibration/test_coverage.py`` re-checks this on symmetric
    and ceiling-skewed Likert ratings and asserts 93–97% at 10, 15 and 60 conversations; near
    a bound (pass/fail, most ratings at the top) only with ``bounds``, which it also checks.
    """
    C = len(sums.clusters)
    check_bounds(bounds, sums.sums, sums.counts)
    W = bootstrap_weights(C, B, seed, scheme) if weights is None else weights
    reps = ratio_replicates(sums, W)
    theta = sums.estimate
    observed = sums.counts.sum(0) > 0
    cov_c = cluster_robust_covariance(sums) if C >= 2 else np.full((len(theta),) * 2, np.nan)
    all_ends = label_endpoints(sums, W, reps, cov_c, level, method, bounds)
    means = []
    for m, label in enumerate(sums.labels):
        est = float(theta[m]) if observed[m] and np.isfinite(theta[m]) else None
        ends = all_ends[m]
        means.append(
            Metric(
                name=f"mean[{label}]",
                estimate=est,
                **ends.metric_fields(),
                level=level,
                requested_method=method,
                B=len(W),
                seed=seed,
                scheme="poisson" if scheme == "poisson" else "multinomial",
                n_clusters=int(np.sum(sums.counts[:, m] > 0)),
                n=int(sums.counts[:, m].sum()),
                undefined_reason=None if observed[m] else f"label {label!r} has no observations",
                note=ends.note,
            )
        )
    cov_b = _replicate_covariance(reps, observed)
    out = PairedBootstrapResult(
        labels=list(sums.labels),
        means=means,
        covariance_bootstrap=cov_b.tolist(),
        covariance_closed_form=cov_c.tolist(),
        n_clusters=C,
        B=len(W),
        seed=seed,
        level=level,
    )
    out._replicates = reps
    out._weights = W
    return out


def label_endpoints(
    sums: ClusterSums,
    W: FloatArray,
    reps: FloatArray,
    cov: FloatArray,
    level: float,
    method: IntervalMethod,
    bounds: Bounds | None,
    widen: bool = True,
) -> list[Endpoints]:
    """Each label's interval (one cluster: none, with the reason); ``widen=False`` keeps a
    bounded rating's logit-scale interval as it is (the input of MOVER)."""
    C, M = sums.sums.shape
    theta = sums.estimate
    observed = sums.counts.sum(0) > 0
    if C < 2:
        return [Endpoints.missing(0, SINGLE_CLUSTER) for _ in range(M)]
    jack = sums.jackknife() if C >= 3 else None
    sd = (
        np.ascontiguousarray(np.sqrt(ratio_replicate_variances(sums, W, reps)).T)
        if method == "studentized"
        else None
    )
    reps = reps.T.copy()  # one contiguous row per label: the per-label passes below read it
    kish = kish_clusters(sums.counts)
    span = cluster_mean_range(sums) if bounds is None else np.full(M, bounds[1] - bounds[0])
    out = []
    for m in range(M):
        est = float(theta[m]) if observed[m] and np.isfinite(theta[m]) else None
        if sd is None:
            out.append(
                interval_endpoints(
                    est,
                    reps[m],
                    level=level,
                    method=method,
                    jackknife=None if jack is None else jack[:, m],
                )
            )
            continue
        se = float(np.sqrt(cov[m, m])) if np.isfinite(cov[m, m]) else None
        binary = bounds is not None and is_binary(
            sums.sums[:, m],
            sums.counts[:, m],
            bounds,
            None if sums.extremes is None else sums.extremes[m],
        )
        raw = None
        if not binary:
            dev = reps[m] - theta[m]
            with np.errstate(invalid="ignore", divide="ignore"):
                tstar = dev / sd[m]
            tstar[dev == 0] = 0.0  # a replicate equal to the estimate deviates by 0, whatever SE*
            raw = studentized_or_percentile(est, se, tstar, reps[m], level, span[m])
            if bounds is None:
                out.append(raw)
                continue
        assert bounds is not None  # a binary label has bounds
        out.append(
            bounded_mean_endpoints(
                est,
                se,
                reps[m],
                sd[m],
                bounds,
                n_clusters=int(np.sum(sums.counts[:, m] > 0)),
                kish=float(kish[m]),
                level=level,
                binary=binary,
                raw=raw if widen else None,
            )
        )
    return out


def cluster_mean_range(sums: ClusterSums) -> FloatArray:
    """Per label, max − min of its cluster means: no interval of its mean is wider."""
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(sums.counts > 0, sums.sums / sums.counts, np.nan)
    out = np.full(means.shape[1], np.nan)
    seen = np.any(np.isfinite(means), axis=0)
    out[seen] = np.nanmax(means[:, seen], axis=0) - np.nanmin(means[:, seen], axis=0)
    return out


def studentized_or_percentile(
    est: float | None,
    se: float | None,
    tstar: FloatArray,
    reps: FloatArray,
    level: float,
    span: float = np.inf,
) -> Endpoints:
    """The studentized interval; percentile (said in the note) when it is degenerate or
    implausibly wide.

    Degenerate: more than 1 − ``level`` of the replicates have zero spread but a deviation
    (only possible with very few clusters, where a replicate can repeat one cluster), so the
    quantile of ``|t*|`` is infinite. Implausible: more than :data:`IMPLAUSIBLE_WIDTH` times
    ``span``, the range of the cluster means (no mean of them lies outside it; a difference of
    two means has the sum of their ranges) — what rounding in SE* produced (±6.7 million for
    a difference of two pass rates).
    """
    ends = studentized_endpoints(est, se, tstar, level=level)
    why = None
    if ends.method == "none" and ends.note == DEGENERATE:
        why = (
            "studentized interval undefined (too many replicates without spread, too few "
            "clusters): percentile interval"
        )
    elif ends.lower is not None and ends.upper is not None and np.isfinite(span):
        width = ends.upper - ends.lower
        if width > IMPLAUSIBLE_WIDTH * span * (1 + ROUNDING) + ROUNDING:
            why = (
                f"studentized interval [{ends.lower:.4g}, {ends.upper:.4g}] implausibly wide "
                f"(more than {IMPLAUSIBLE_WIDTH} × the range of the cluster means, {span:.4g}): "
                "percentile interval"
            )
    if why is None:
        return ends
    pct = interval_endpoints(est, reps, level=level, method="percentile")
    return replace(pct, note=join_notes(why, pct.note))


def _replicate_covariance(reps: FloatArray, observed: NDArray[np.bool_]) -> FloatArray:
    """Covariance of the replicates of the observed labels; NaN rows/columns elsewhere."""
    M = reps.shape[1]
    out = np.full((M, M), np.nan)
    idx = np.flatnonzero(observed)
    ok = np.all(np.isfinite(reps[:, idx]), axis=1)
    if len(idx) and int(ok.sum()) >= 2:
        out[np.ix_(idx, idx)] = np.cov(reps[ok][:, idx], rowvar=False).reshape(len(idx), len(idx))
    return out


def bootstrap_means(
    values: Sequence[float] | FloatArray,
    clusters: Sequence[object],
    labels: Sequence[object] | None = None,
    **kwargs: object,
) -> PairedBootstrapResult:
    """Convenience: ``paired_cluster_bootstrap`` straight from long columns.

    ``labels`` defaults to a single label ``all``; ``kwargs`` go to
    ``paired_cluster_bootstrap``. Without ``bounds``, scores that are all 0 or 1 (pass/fail)
    get ``bounds=(0, 1)``.
    """
    labs: Sequence[object] = labels if labels is not None else ["all"] * len(values)
    sums = ClusterSums.from_long(labs, clusters, values)
    kwargs.setdefault("bounds", infer_bounds(np.asarray(values, dtype=np.float64)))
    return paired_cluster_bootstrap(sums, **kwargs)  # type: ignore[arg-type]
