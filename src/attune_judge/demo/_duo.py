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

from attune_judge.calibration import (
    Metric,
    bootstrap_means,
    calibrate,
    fmt_metric,
    interval_endpoints,
)
from attune_judge.data import Rating
from attune_judge.runs import DuoResult, GroupComparison

__all__ = ["DuoResult", "GroupComparison", "duo_analysis", "duo_markdown"]


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
    ratings: Sequence[Rating], *, language: str = "en", B: int = 1_000, seed: int = 0
) -> DuoResult:
    """Observer-vs-participant agreement and model/style comparisons on DUO ratings."""
    recs = [r for r in ratings if r.metadata.get("language") == language]
    out = DuoResult(language=language)
    observers = [r for r in recs if r.rater_group == "observers"]
    participant = [r for r in recs if r.rater_group == "participant"]
    if observers and participant:
        out.observer_agreement = calibrate(observers, participant, level="ordinal", B=B, seed=seed)
    dims = sorted({r.dimension for r in participant})
    for dim in dims:
        for factor in ("model", "style_prompt"):
            for cluster_by in ("dialogue", "participant"):
                out.comparisons.append(_compare(participant, dim, factor, cluster_by, B, seed))
    return out


def duo_markdown(result: DuoResult) -> str:
    """Summary tables for demo part b."""
    lines = [f"### Observers vs participants ({result.language}, clustered by dialogue)", ""]
    if result.observer_agreement:
        lines += [
            "| dimension | n | Spearman participant vs observers' median | κ_qw | "
            "α observers → with participant | ρ ceiling: observers / participant |",
            "|---|---|---|---|---|---|",
        ]
        for d in result.observer_agreement.dimensions:
            for j in d.judges:
                m = j.vs_humans.metrics
                alpha = (
                    f"{fmt_metric(j.alpha.humans_only, 2)} → {fmt_metric(j.alpha.with_judge, 2)}"
                    if j.alpha
                    else "—"
                )
                ceil = (
                    f"{j.ceiling.mean_human:.2f} / {j.ceiling.mean_judge:.2f}"
                    if j.ceiling and j.ceiling.mean_human is not None and j.ceiling.mean_judge
                    else "—"
                )
                lines.append(
                    f"| {d.dimension} | {j.vs_humans.n} | {fmt_metric(m.get('spearman'), 2)} | "
                    f"{fmt_metric(m.get('cohen_kappa_quadratic'), 2)} | {alpha} | {ceil} |"
                )
    lines += ["", f"### Model and style differences (participant ratings, {result.language})", ""]
    lines += ["| dimension | factor | clustered by | means [95% CI] | differences [95% CI] |"]
    lines += ["|---|---|---|---|---|"]
    for c in result.comparisons:
        means = "; ".join(f"{k} {fmt_metric(v, 2)}" for k, v in c.means.items())
        diffs = "; ".join(f"{k} {fmt_metric(v, 2)}" for k, v in c.differences.items())
        lines.append(f"| {c.dimension} | {c.factor} | {c.cluster_by} | {means} | {diffs} |")
    return "\n".join(lines) + "\n"
