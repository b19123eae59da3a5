"""Bradley–Terry strengths from pairwise outcomes, bootstrapped by re-weighting clusters.

Win counts ``W_ij`` (i beat j; a tie is half a win for each side) are summed per cluster once.
A bootstrap replicate re-weights clusters, ``W*_ij = Σ_c w_c W_c,ij``, and all replicates are
refitted at once by a batched Newton method (one ``(B × p × p)`` linear solve per iteration).
The log-likelihood carries a small ridge penalty ``l2/2 · ||β||²`` so that strengths stay finite
when a model wins (or loses) every comparison in a replicate and the fit is unique with
``Σ β = 0``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import PrivateAttr

from attune_judge.calibration._bootstrap import (
    FloatArray,
    bootstrap_weights,
    interval_endpoints,
)
from attune_judge.calibration._ranksets import (
    RankProbabilities,
    RankSets,
    rank_confidence_sets,
    rank_probabilities,
)
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.errors import UserError

__all__ = ["BradleyTerryResult", "bradley_terry", "fit_bradley_terry_batch", "win_tables"]

ELO_SCALE = 400 / np.log(10)


def win_tables(
    model_a: Sequence[str],
    model_b: Sequence[str],
    winners: Sequence[str | None],
    clusters: Sequence[object],
) -> tuple[list[str], list[str], FloatArray]:
    """Per-cluster win counts.

    Returns
    -------
    (models, clusters, tables)
        Sorted model and cluster names, and ``tables`` of shape (C, p, p) where
        ``tables[c, i, j]`` is the number of wins of i over j in cluster c (ties = ½ each).
        Outcomes with winner ``None`` are skipped.
    """
    if not (len(model_a) == len(model_b) == len(winners) == len(clusters)):
        raise ValueError("model_a, model_b, winners and clusters must have the same length")
    keep = [i for i, w in enumerate(winners) if w is not None]
    bad = sorted({str(winners[i]) for i in keep} - {"A", "B", "tie"})
    if bad:
        raise UserError(f"winner must be A, B or tie; got {bad[:5]}")
    models = sorted({str(model_a[i]) for i in keep} | {str(model_b[i]) for i in keep})
    cl_names = sorted({str(clusters[i]) for i in keep})
    mi = {m: k for k, m in enumerate(models)}
    ci = {c: k for k, c in enumerate(cl_names)}
    T = np.zeros((len(cl_names), len(models), len(models)))
    for i in keep:
        a, b, c = mi[str(model_a[i])], mi[str(model_b[i])], ci[str(clusters[i])]
        if a == b:
            continue
        w = winners[i]
        if w == "A":
            T[c, a, b] += 1
        elif w == "B":
            T[c, b, a] += 1
        else:
            T[c, a, b] += 0.5
            T[c, b, a] += 0.5
    return models, cl_names, T


def fit_bradley_terry_batch(
    wins: FloatArray, *, l2: float = 0.01, max_iter: int = 100, tol: float = 1e-10
) -> tuple[FloatArray, FloatArray]:
    """Fit Bradley–Terry log-strengths for a batch of win matrices at once.

    Parameters
    ----------
    wins
        Shape (K, p, p); ``wins[k, i, j]`` = weighted wins of i over j.
    l2
        Ridge penalty (keeps separated data finite; ``Σ β = 0`` at the optimum).
    max_iter, tol
        Newton iterations and convergence threshold on the largest step.

    Returns
    -------
    (beta, converged)
        ``beta`` (K, p) with NaN for models without any comparison in that matrix; a boolean
        ``converged`` per matrix.
    """
    W = np.asarray(wins, dtype=np.float64)
    K, p, _ = W.shape
    N = W + W.transpose(0, 2, 1)
    beta = np.zeros((K, p))
    eye = np.eye(p)[None]
    done = np.zeros(K, dtype=bool)
    for _ in range(max_iter):
        P = 1 / (1 + np.exp(-(beta[:, :, None] - beta[:, None, :])))
        grad = np.sum(W - N * P, axis=2) - l2 * beta
        V = N * P * (1 - P)
        H = -V + eye * (V.sum(axis=2)[:, :, None] + l2)
        step = np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        step = np.clip(step, -3, 3)
        beta = beta + step
        done = np.max(np.abs(step), axis=1) < tol
        if np.all(done):
            break
    beta = beta - beta.mean(axis=1, keepdims=True)
    absent = N.sum(axis=2) <= 0
    beta[absent] = np.nan
    return beta, done


class BradleyTerryResult(ResultModel):
    """Bradley–Terry strengths with paired cluster-bootstrap intervals and rank sets."""

    labels: list[str]
    """Models."""
    strengths: list[Metric]
    """Log-strength β (logit scale, centred to mean 0) per model, with interval."""
    elo: list[float | None]
    """Elo-like rating ``1000 + 400/ln(10) · β`` (display only)."""
    n_comparisons: float
    """Number of comparisons used (ties count once)."""
    ties: str
    """How ties were counted (``half``: half a win for each side)."""
    l2: float
    """Ridge penalty of the fit."""
    rank_sets_simultaneous: RankSets
    """Simultaneous 95% confidence sets for ranks (bootstrap covariance of β)."""
    rank_sets_marginal: RankSets
    """Marginal confidence sets for ranks."""
    rank_probabilities: RankProbabilities
    """P(rank = 1), P(rank ≤ k)."""
    n_unconverged: int
    """Replicates whose Newton fit did not converge."""

    _replicates: FloatArray | None = PrivateAttr(default=None)

    @property
    def replicates(self) -> FloatArray:
        """Bootstrap replicates of β, shape (B, p)."""
        if self._replicates is None:
            raise ValueError("replicates were not kept")
        return self._replicates


def bradley_terry(
    model_a: Sequence[str],
    model_b: Sequence[str],
    winners: Sequence[str | None],
    clusters: Sequence[object],
    *,
    B: int = 1_000,
    level: float = 0.95,
    seed: int = 0,
    scheme: str = "multinomial",
    method: IntervalMethod = "bca",
    l2: float = 0.01,
) -> BradleyTerryResult:
    """Fit Bradley–Terry and bootstrap it by re-weighting clusters (all replicates at once).

    Parameters
    ----------
    model_a, model_b, winners, clusters
        One entry per comparison: the two models, the winner (``A``, ``B``, ``tie``, ``None``
        = skip) and the cluster (conversation) it belongs to.
    B, level, seed, scheme, method, l2
        Replicates, confidence level, seed, weight scheme, interval method, ridge penalty.
    """
    models, _clusters, T = win_tables(model_a, model_b, winners, clusters)
    if len(models) < 2:
        raise UserError("Bradley–Terry needs comparisons between at least two models")
    C, p = T.shape[0], len(models)
    flat = T.reshape(C, p * p)
    beta_hat = fit_bradley_terry_batch(T.sum(0)[None], l2=l2)[0][0]
    Wt = bootstrap_weights(C, B, seed, scheme)
    reps, conv = fit_bradley_terry_batch((Wt @ flat).reshape(B, p, p), l2=l2)
    jack = None
    if method == "bca" and C >= 3:
        jack = fit_bradley_terry_batch(((1 - np.eye(C)) @ flat).reshape(C, p, p), l2=l2)[0]
    strengths = []
    for m, name in enumerate(models):
        est = float(beta_hat[m]) if np.isfinite(beta_hat[m]) else None
        e = interval_endpoints(
            est,
            reps[:, m],
            level=level,
            method=method,
            jackknife=None if jack is None else jack[:, m],
        )
        strengths.append(
            Metric(
                name=f"bt_strength[{name}]",
                estimate=est,
                lower=e.lower,
                upper=e.upper,
                level=level,
                method=e.method,
                requested_method=method,
                B=B,
                seed=seed,
                scheme="poisson" if scheme == "poisson" else "multinomial",
                n_clusters=C,
                n=round(float(T[:, m, :].sum() + T[:, :, m].sum())),
                mc_error_lower=e.mc_error_lower,
                mc_error_upper=e.mc_error_upper,
                n_undefined_replicates=e.n_undefined,
            )
        )
    ok = np.all(np.isfinite(reps), axis=1)
    cov = np.cov(reps[ok], rowvar=False)
    theta = np.nan_to_num(beta_hat)
    out = BradleyTerryResult(
        labels=models,
        strengths=strengths,
        elo=[None if not np.isfinite(b) else float(1000 + ELO_SCALE * b) for b in beta_hat],
        n_comparisons=float(T.sum()),
        ties="half",
        l2=l2,
        rank_sets_simultaneous=rank_confidence_sets(theta, cov, models, level=level, seed=seed),
        rank_sets_marginal=rank_confidence_sets(
            theta, cov, models, kind="marginal", level=level, seed=seed
        ),
        rank_probabilities=rank_probabilities(reps, models, level),
        n_unconverged=int(len(conv) - np.count_nonzero(conv)),
    )
    out._replicates = reps
    return out
