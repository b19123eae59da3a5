"""Bradley–Terry with style covariates ("Does style matter?", Li, Angelopoulos, Chiang 2024).

Each comparison of reply a (model i) with reply b (model j) in cluster c has outcome
``y = 1`` (a won), ``0`` (b won) or ``½`` (a tie, as in :func:`bradley_terry`: half a win for
each side), or a probability. The model is

    logit P(a wins) = β_i − β_j + Σ_k γ_k z_k,   z_k = (s_ak − s_bk) / (s_ak + s_bk) / sd_k

with ``s_ak`` reply a's style feature k (length in characters; with ``markdown``: headers,
bold spans, list items), the normalised difference 0 when both are 0, and sd_k its standard
deviation over the comparisons (γ_k is per standard deviation). The controlled strengths β
(centred to mean 0) are what the judge would prefer between replies of equal style; γ are the
style coefficients. Fitted by maximum likelihood (Newton), intervals by a cluster bootstrap
over conversations: studentized (each replicate's own cluster-robust sandwich covariance), and
simultaneous/marginal rank sets from the bootstrap of the max-t statistic, as for the raw
Bradley–Terry fit, which is reported beside (:func:`bradley_terry` on the same comparisons).

What it cannot do: a model that is better *because* its replies are longer (more complete
advice, a fuller answer) loses that credit too; controlling answers "who wins at equal
length", not "who is better".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from pydantic import Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import Metric, ResultModel
from attune_judge.calibration.ranking._bradley_terry import BradleyTerryResult, bradley_terry
from attune_judge.calibration.ranking._glm import fit_soft_logistic, sandwich
from attune_judge.calibration.ranking._ranksets import (
    RankSets,
    StudentizedDraws,
    no_rank_claims,
    rank_confidence_sets,
)
from attune_judge.calibration.resampling._bootstrap import (
    MIN_CLUSTERS,
    FloatArray,
    bootstrap_weights,
    few_clusters_warning,
    studentized_endpoints,
)
from attune_judge.errors import UserError

__all__ = ["STYLE_FEATURES", "StyleControlledResult", "style_bradley_terry", "style_features"]

STYLE_FEATURES = ("length", "headers", "bold", "list_items")
"""Style features: ``length`` alone, or with ``markdown`` all four."""

_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.M)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.M)


def style_features(text: str) -> dict[str, float]:
    """Length (characters) and Markdown counts (headers, bold spans, list items) of a reply."""
    return {
        "length": float(len(text)),
        "headers": float(len(_HEADER.findall(text))),
        "bold": float(len(_BOLD.findall(text))),
        "list_items": float(len(_LIST.findall(text))),
    }


class StyleControlledResult(ResultModel):
    """Style-controlled Bradley–Terry strengths, the style coefficients and the raw fit."""

    labels: list[str]
    """Models (sorted)."""
    covariates: list[str]
    """Style features controlled for."""
    strengths: list[Metric]
    """Controlled log-strength β (logit scale, mean 0) with studentized interval."""
    style: list[Metric]
    """γ_k: logit change per standard deviation of the normalised difference of feature k."""
    style_sd: list[float]
    """sd_k of the normalised differences."""
    rank_sets_simultaneous: RankSets
    """Simultaneous rank sets of the controlled strengths."""
    rank_sets_marginal: RankSets
    """Marginal rank sets of the controlled strengths."""
    rank_claims: bool = True
    """``False`` below ``MIN_CLUSTERS`` conversations (every set is then ``[1, p]``)."""
    raw: BradleyTerryResult
    """The raw Bradley–Terry fit of the same comparisons."""
    n_comparisons: int
    """Comparisons used."""
    n_clusters: int
    """Conversations resampled."""
    n_used: int
    """Bootstrap replicates with a converged fit."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats that limit what may be claimed."""


def _contrast(p: int) -> FloatArray:
    """Orthonormal ``(p, p−1)`` basis of the vectors summing to 0."""
    u, _, _ = np.linalg.svd(np.eye(p) - 1.0 / p)
    return np.asarray(u[:, : p - 1])


def _linked(p: int, ia: np.ndarray, ib: np.ndarray) -> set[int]:
    """The models reachable from model 0 through comparisons."""
    nbrs: list[set[int]] = [set() for _ in range(p)]
    for i, j in zip(ia.tolist(), ib.tolist(), strict=True):
        nbrs[i].add(j)
        nbrs[j].add(i)
    seen, todo = {0}, [0]
    while todo:
        for j in nbrs[todo.pop()] - seen:
            seen.add(j)
            todo.append(j)
    return seen


def _design(
    model_a: Sequence[str],
    model_b: Sequence[str],
    outcome: Sequence[float],
    clusters: Sequence[object],
    style_a: Sequence[Sequence[float]],
    style_b: Sequence[Sequence[float]],
    covariates: Sequence[str],
) -> tuple[
    list[str],
    np.ndarray,
    np.ndarray,
    np.ndarray,
    np.ndarray,
    int,
    FloatArray,
    FloatArray,
    FloatArray,
]:
    """Validated inputs: models, their indices and comparison counts, cluster indices and
    count, the standardised style differences, their sd's, the outcomes."""
    n = len(model_a)
    if not (n == len(model_b) == len(outcome) == len(clusters) == len(style_a) == len(style_b)):
        raise ValueError("all per-comparison inputs must have the same length")
    y = np.asarray(outcome, dtype=np.float64)
    if n == 0:
        raise UserError("style control: no comparisons")
    if not np.all(np.isfinite(y)) or (y < 0).any() or (y > 1).any():
        raise UserError("style control: every outcome must be a number in [0, 1]")
    if np.all(y == 0.5):
        raise UserError(f"style control: all {n} comparisons are ties: nothing to rank")
    names = sorted({str(m) for m in model_a} | {str(m) for m in model_b})
    p = len(names)
    if p < 2:
        raise UserError("style control: needs comparisons between at least two models")
    mi = {m: k for k, m in enumerate(names)}
    ia = np.array([mi[str(m)] for m in model_a])
    ib = np.array([mi[str(m)] for m in model_b])
    if (ia == ib).any():
        raise UserError(
            f"style control: comparison {int(np.argmax(ia == ib))} compares a model with itself"
        )
    counts = np.bincount(ia, minlength=p) + np.bincount(ib, minlength=p)
    thin = [names[k] for k in range(p) if counts[k] < 2]
    if thin:
        raise UserError(
            f"style control: model {thin[0]!r} is in {int(counts[mi[thin[0]]])} comparison; "
            "each model needs at least two"
        )
    linked = _linked(p, ia, ib)
    if len(linked) < p:
        rest = sorted(names[k] for k in range(p) if k not in linked)
        raise UserError(
            f"style control: models {rest[:5]} are never compared, directly or through others, "
            f"with {names[0]!r}: their strengths are not on one scale (rank each group alone)"
        )
    cl_names = sorted({str(c) for c in clusters})
    C = len(cl_names)
    if C < 2:
        raise UserError("style control: needs comparisons from at least two conversations")
    cidx = {c: k for k, c in enumerate(cl_names)}
    cl = np.array([cidx[str(c)] for c in clusters])
    Sa = np.asarray(style_a, dtype=np.float64).reshape(n, -1)
    Sb = np.asarray(style_b, dtype=np.float64).reshape(n, -1)
    k = len(covariates)
    if Sa.shape[1] != k or Sb.shape[1] != k:
        raise ValueError("style_a/style_b must have one column per covariate")
    if (
        not (np.all(np.isfinite(Sa)) and np.all(np.isfinite(Sb)))
        or (Sa < 0).any()
        or (Sb < 0).any()
    ):
        raise UserError("style control: style features must be non-negative numbers")
    tot = Sa + Sb
    with np.errstate(invalid="ignore", divide="ignore"):
        Z = np.where(tot > 0, (Sa - Sb) / np.where(tot > 0, tot, 1.0), 0.0)
    sd = Z.std(axis=0, ddof=1) if n > 1 else np.zeros(k)
    flat = [covariates[j] for j in range(k) if not sd[j] > 1e-12]
    if flat:
        raise UserError(
            f"style control: the compared replies never differ in {flat[0]}: there is no "
            f"variation to control for (drop it from --control)"
        )
    Z = Z / sd
    return names, ia, ib, counts, cl, C, Z, sd, y


def style_bradley_terry(
    model_a: Sequence[str],
    model_b: Sequence[str],
    outcome: Sequence[float],
    clusters: Sequence[object],
    style_a: Sequence[Sequence[float]],
    style_b: Sequence[Sequence[float]],
    covariates: Sequence[str] = ("length",),
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> StyleControlledResult:
    """Fit Bradley–Terry with style covariates and bootstrap it over clusters (module notes).

    Parameters
    ----------
    model_a, model_b, outcome, clusters
        One entry per comparison: the two models, P(a wins) (1, 0, ½ for a tie, or a
        probability) and the conversation.
    style_a, style_b
        Per comparison, the two replies' features, in the order of ``covariates``.
    covariates
        Names of the features (e.g. ``("length",)`` or :data:`STYLE_FEATURES`).

    Raises
    ------
    UserError
        Degenerate input: fewer than two models or two conversations, a model in fewer than
        two comparisons, all comparisons ties, a feature without variation, or separated
        data (a model that never lost or never won).
    """
    names, ia, ib, counts, cl, C, Z, sd, y = _design(
        model_a, model_b, outcome, clusters, style_a, style_b, covariates
    )
    n, p, k = len(y), len(names), len(covariates)
    Q = _contrast(p)
    E = np.zeros((n, p))
    E[np.arange(n), ia] = 1.0
    E[np.arange(n), ib] = -1.0
    X = np.hstack([E @ Q, Z])
    d = X.shape[1]
    if np.linalg.matrix_rank(X) < d:
        raise UserError(
            "style control: the style features are determined by which models are compared "
            f"(the design has rank {np.linalg.matrix_rank(X)} < {d}): style and strength "
            "cannot be separated on these data"
        )
    theta, ok = fit_soft_logistic(X, y, np.ones((1, n)))
    if not ok[0]:
        raise UserError(
            "style control: the fit has no finite estimate (some model never lost or never "
            "won once style is accounted for): compare more pairs"
        )
    theta0 = theta[0]
    W = bootstrap_weights(C, B, seed)
    reps, conv = fit_soft_logistic(X, y, W[:, cl], start=theta0)
    reps[~conv] = np.nan
    good = np.flatnonzero(conv)
    if len(good) < 2:
        raise UserError(
            f"style control: only {len(good)} of {B} bootstrap replicates have a fit; too few "
            "comparisons per conversation"
        )
    ones = np.ones(n)
    cov0 = sandwich(X, y, ones, cl, np.ones((1, C)), theta0[None])[0]
    L = np.zeros((p + k, d))
    L[:p, : p - 1] = Q
    L[p:, p - 1 :] = np.eye(k)
    est = L @ theta0
    cov_hat = L @ cov0 @ L.T
    se_hat = np.sqrt(np.clip(np.diag(cov_hat), 0, None))
    tstar = np.full((B, p + k), np.nan)
    pair_t = np.full((len(good), p, p), np.nan, dtype=np.float32)
    step = max(1, 200_000 // max(1, n))
    for a in range(0, len(good), step):
        idx = good[a : a + step]
        covs = sandwich(X, y, ones, cl, W[idx], reps[idx])
        full = np.einsum("ij,bjk,lk->bil", L, covs, L)
        r = reps[idx] @ L.T
        dvar = np.clip(np.diagonal(full, axis1=1, axis2=2), 0, None)
        with np.errstate(invalid="ignore", divide="ignore"):
            dev = r - est[None, :]
            tstar[idx] = np.where(dev == 0, 0.0, dev / np.sqrt(dvar))
            bs = r[:, :p]
            diff = (bs[:, :, None] - bs[:, None, :]) - (est[:p, None] - est[None, :p])
            dd = dvar[:, :p]
            cv = full[:, :p, :p]
            t = diff / np.sqrt(np.clip(dd[:, :, None] + dd[:, None, :] - 2 * cv, 0, None))
        t[diff == 0] = 0.0
        pair_t[a : a + len(idx)] = t
    metrics = []
    for j in range(p + k):
        e = studentized_endpoints(float(est[j]), float(se_hat[j]), tstar[:, j], level=level)
        is_model = j < p
        label = names[j] if is_model else covariates[j - p]
        metrics.append(
            Metric(
                name=f"{'controlled_strength' if is_model else 'style'}[{label}]",
                estimate=float(est[j]),
                **e.metric_fields(),
                level=level,
                requested_method="studentized",
                B=B,
                seed=seed,
                n_clusters=C,
                n=int(counts[j]) if is_model else n,
                note=e.note,
            )
        )
    claims = C >= MIN_CLUSTERS
    if claims:
        draws = StudentizedDraws.from_statistics(pair_t)
        sim, mar = (
            rank_confidence_sets(
                est[:p], cov_hat[:p, :p], names, kind=kind, level=level, seed=seed, draws=draws
            )
            for kind in ("simultaneous", "marginal")
        )
    else:
        sim, mar = no_rank_claims(names, level, seed)
    winners: list[str | None] = ["A" if v == 1 else "B" if v == 0 else "tie" for v in y]
    if not set(np.unique(y)) <= {0.0, 0.5, 1.0}:
        winners = ["A" if v > 0.5 else "B" if v < 0.5 else "tie" for v in y]
    raw = bradley_terry(
        [str(m) for m in model_a],
        [str(m) for m in model_b],
        winners,
        list(clusters),
        B=B,
        level=level,
        seed=seed,
        l2=0.0,
    )
    return StyleControlledResult(
        labels=names,
        covariates=list(covariates),
        strengths=metrics[:p],
        style=metrics[p:],
        style_sd=[float(v) for v in sd],
        rank_sets_simultaneous=sim,
        rank_sets_marginal=mar,
        rank_claims=claims,
        raw=raw,
        n_comparisons=n,
        n_clusters=C,
        n_used=len(good),
        warnings=[w for w in [few_clusters_warning(C)] if w],
    )
