"""Demo part b: DUO -- do outside observers agree with the participants themselves, and do the
two bot models and the three style prompts differ?

Observer agreement treats the participant as the rater under test and the three observers as
the reference people (``calibrate``): intervals are clustered by dialogue. Model and style
means use the participant's own ratings; intervals are cluster bootstraps by dialogue and, as
a robustness check, by participant (each participant had several dialogues, so dialogues of
one participant are not independent and the participant-clustered interval is the honest one).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import (
    Metric,
    bootstrap_means,
    calibrate,
    interval_endpoints,
)
from attune_judge.data import Rating
from attune_judge.runs import DuoResult, GroupComparison

__all__ = ["DuoResult", "GroupComparison", "duo_analysis"]


def _compare(
    ratings: Sequence[Rating], dim: str, factor: str, cluster_by: str, B: int, seed: int
) -> GroupComparison:
    recs = [r for r in ratings if r.dimension == dim and isinstance(r.value, float)]
    labels = [str(r.metadata[factor]) for r in recs]
    if cluster_by == "participant":
        clusters = [str(r.metadata.get("participant_id")) for r in recs]
    else:
        clusters = [str(r.cluster) for r in recs]
    values = [float(r.value) for r in recs]  # type: ignore[arg-type]
    res = bootstrap_means(values, clusters, labels, B=B, seed=seed, method="percentile")
    reps, est = res.replicates, res.estimates
    means = {lab: m for lab, m in zip(res.labels, res.means, strict=True)}
    diffs: dict[str, Metric] = {}
    for i, j in itertools.combinations(range(len(res.labels)), 2):
        d = reps[:, i] - reps[:, j]
        e = float(est[i] - est[j])
        ends = interval_endpoints(e, d, method="percentile")
        diffs[f"{res.labels[i]} − {res.labels[j]}"] = Metric(
            name="mean_difference",
            estimate=e,
            lower=ends.lower,
            upper=ends.upper,
            method=ends.method,
            requested_method="percentile",
            B=B,
            seed=seed,
            n_clusters=res.n_clusters,
            n=len(values),
            n_undefined_replicates=int(np.sum(~np.isfinite(d))),
        )
    return GroupComparison(
        dimension=dim, factor=factor, cluster_by=cluster_by, means=means, differences=diffs
    )


def duo_analysis(
    ratings: Sequence[Rating], *, language: str = "en", B: int = DEFAULT_B, seed: int = 0
) -> DuoResult:
    """Observer-vs-participant agreement and model/style comparisons on DUO ratings."""
    recs = [r for r in ratings if r.metadata.get("language") == language]
    out = DuoResult(language=language)
    observers = [r for r in recs if r.rater_group == "observers"]
    participant = [r for r in recs if r.rater_group == "participant"]
    if observers and participant:
        out.observer_agreement = calibrate(observers, participant, B=B, seed=seed)
    dims = sorted({r.dimension for r in participant})
    for dim in dims:
        for factor in ("model", "style_prompt"):
            for cluster_by in ("dialogue", "participant"):
                out.comparisons.append(_compare(participant, dim, factor, cluster_by, B, seed))
    return out
