"""Paired intervals of differences of label means, ``θ_j − θ_k``, on one cluster draw."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric
from attune_judge.calibration.resampling._bootstrap import (
    SINGLE_CLUSTER,
    Endpoints,
    FloatArray,
    bootstrap_weights,
    interval_endpoints,
)
from attune_judge.calibration.resampling._bounded import Bounds, check_bounds, mover_endpoints
from attune_judge.calibration.resampling._means import (
    cluster_mean_range,
    label_endpoints,
    studentized_or_percentile,
)
from attune_judge.calibration.resampling._ratio import (
    ROUNDING,
    ClusterSums,
    cluster_robust_covariance,
    ratio_replicate_variances,
    ratio_replicates,
)

__all__ = ["difference_intervals"]


def difference_intervals(
    sums: ClusterSums,
    pairs: Sequence[tuple[int, int]],
    *,
    weights: FloatArray | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "studentized",
    chunk_pairs: int = 256,
    bounds: Bounds | None = None,
) -> list[Metric]:
    """Paired intervals of ``θ_j − θ_k`` for the given (j, k) label pairs, on one cluster draw.

    ``studentized`` (default) is the symmetric bootstrap-t of the difference with its
    cluster-robust SE, each replicate using its own SE*: with
    ``e_cm = S_cm − θ*_m n_cm`` and ``N*_m = Σ_c w_c n_cm``,
    ``SE*² = C/(C−1) · Σ_c w_c (e_cj/N*_j − e_ck/N*_k)²`` — four matrix products per block of
    pairs. ``percentile`` and ``bca`` are the usual ones. With ``bounds`` (see
    :func:`paired_cluster_bootstrap`) a studentized difference is the MOVER interval of the two
    bounded means' intervals. Name of each result: ``diff[j_label-k_label]``.
    """
    C = len(sums.clusters)
    check_bounds(bounds, sums.sums, sums.counts)
    W = bootstrap_weights(C, B, seed) if weights is None else np.asarray(weights, np.float64)
    reps = ratio_replicates(sums, W)
    theta = sums.estimate
    cov = cluster_robust_covariance(sums) if C >= 2 else np.full((len(theta),) * 2, np.nan)
    jack = sums.jackknife() if C >= 3 else None
    S, n = sums.sums, sums.counts
    den = W @ n
    label_ends = None
    if method == "studentized" and bounds is not None and C >= 2:
        label_ends = label_endpoints(sums, W, reps, cov, level, method, bounds, widen=False)
    span = cluster_mean_range(sums)
    out: list[Metric] = []
    for a in range(0, len(pairs), chunk_pairs):
        block = list(pairs[a : a + chunk_pairs])
        J = np.array([p[0] for p in block], dtype=np.intp)
        K = np.array([p[1] for p in block], dtype=np.intp)
        d_reps = reps[:, J] - reps[:, K]
        tstar = None
        if method == "studentized" and label_ends is None and C >= 2:
            tj, tk = reps[:, J], reps[:, K]
            with np.errstate(invalid="ignore", divide="ignore"):
                own = ratio_replicate_variances(sums, W, reps) * (C - 1) / C  # Σ w e²/N² per label
                cross = (
                    W @ (S[:, J] * S[:, K])
                    - tk * (W @ (S[:, J] * n[:, K]))
                    - tj * (W @ (n[:, J] * S[:, K]))
                    + tj * tk * (W @ (n[:, J] * n[:, K]))
                ) / (den[:, J] * den[:, K])
                var = own[:, J] + own[:, K] - 2 * cross
                var[np.abs(var) <= ROUNDING * (own[:, J] + own[:, K] + 2 * np.abs(cross))] = 0
                var = var * C / max(C - 1, 1)
                dev = d_reps - (theta[J] - theta[K])[None, :]
                tstar = dev / np.sqrt(np.clip(var, 0, None))
            tstar[dev == 0] = 0.0
        for i, (j, k) in enumerate(block):
            est_f = theta[j] - theta[k]
            est = float(est_f) if np.isfinite(est_f) else None
            if C < 2:
                ends = Endpoints.missing(0, SINGLE_CLUSTER)
            elif label_ends is not None:
                with np.errstate(invalid="ignore", divide="ignore"):
                    r = cov[j, k] / np.sqrt(cov[j, j] * cov[k, k])
                ends = mover_endpoints(
                    None if est is None else float(theta[j]),
                    label_ends[j],
                    None if est is None else float(theta[k]),
                    label_ends[k],
                    float(r),
                )
            elif method == "studentized":
                v = cov[j, j] + cov[k, k] - 2 * cov[j, k]
                se = float(np.sqrt(max(v, 0.0))) if np.isfinite(v) else None
                ends = studentized_or_percentile(
                    est,
                    se,
                    tstar[:, i] if tstar is not None else np.full(len(W), np.nan),
                    d_reps[:, i],
                    level,
                    float(span[j] + span[k]),
                )
            else:
                ends = interval_endpoints(
                    est,
                    d_reps[:, i],
                    level=level,
                    method=method,
                    jackknife=None if jack is None else jack[:, j] - jack[:, k],
                )
            out.append(
                Metric(
                    name=f"diff[{sums.labels[j]}-{sums.labels[k]}]",
                    estimate=est,
                    **ends.metric_fields(),
                    level=level,
                    requested_method=method,
                    B=len(W),
                    seed=seed,
                    n_clusters=int(np.sum((n[:, j] > 0) | (n[:, k] > 0))),
                    n=int(n[:, [j, k]].sum()),
                    undefined_reason=None if est is not None else "a label has no observations",
                    note=ends.note,
                )
            )
    return out
