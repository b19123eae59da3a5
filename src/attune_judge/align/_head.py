"""Fitting the calibration head (LLM-Rubric): a proportional-odds model per target criterion
with rater offsets, by penalised maximum likelihood (numpy + scipy's BFGS with the
analytic gradient). The model and its prediction are in :mod:`attune_judge.judges._calibrated`.

Penalised negative log-likelihood of one criterion's ratings ``(item i, rater r, level y)``::

    −Σ log[σ(θ_y − η) − σ(θ_{y−1} − η)] + λ_w/2 ‖w‖² + λ_b/2 ‖b‖²,   η = z_i·w + b_r

with ``θ_{−1} = −∞``, ``θ_{K−1} = +∞`` and the cut points parametrised as
``θ_0 = a_0``, ``θ_k = θ_{k−1} + exp(a_k)`` (the parametrisation of statsmodels'
``OrderedModel``, against which the unpenalised fit is tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from attune_judge.judges._calibrated import OrdinalHead

__all__ = ["OrdinalData", "fit_ordinal", "ordinal_nll"]


@dataclass(frozen=True)
class OrdinalData:
    """One criterion's ratings as arrays."""

    z: np.ndarray
    """(n_items, p) standardised features."""
    item: np.ndarray
    """(n,) item row of each rating."""
    rater: np.ndarray
    """(n,) rater index of each rating (−1: no offset)."""
    y: np.ndarray
    """(n,) level index 0..K−1 of each rating."""
    n_levels: int
    n_raters: int


def _cuts(a: np.ndarray) -> np.ndarray:
    return np.concatenate([a[:1], a[0] + np.cumsum(np.exp(a[1:]))])


def _f(x: np.ndarray) -> np.ndarray:
    s = expit(x)
    return s * (1.0 - s)


def ordinal_nll(
    params: np.ndarray, d: OrdinalData, lam_w: float = 0.0, lam_b: float = 0.0
) -> tuple[float, np.ndarray]:
    """Penalised negative log-likelihood and its gradient; ``params`` = (a, w, b)."""
    K, p = d.n_levels, d.z.shape[1]
    a, w, b = params[: K - 1], params[K - 1 : K - 1 + p], params[K - 1 + p :]
    theta = _cuts(a)
    offsets = np.where(d.rater >= 0, b[np.maximum(d.rater, 0)] if len(b) else 0.0, 0.0)
    eta = d.z[d.item] @ w + offsets
    ext = np.concatenate([[-np.inf], theta, [np.inf]])
    hi, lo = ext[d.y + 1] - eta, ext[d.y] - eta
    F_hi, F_lo = expit(hi), expit(lo)
    prob = np.maximum(F_hi - F_lo, 1e-300)
    f_hi = np.where(np.isfinite(hi), _f(np.where(np.isfinite(hi), hi, 0.0)), 0.0)
    f_lo = np.where(np.isfinite(lo), _f(np.where(np.isfinite(lo), lo, 0.0)), 0.0)
    nll = -float(np.sum(np.log(prob))) + 0.5 * lam_w * float(w @ w) + 0.5 * lam_b * float(b @ b)
    # d(−log p)/dη, and per cut point
    g_eta = (f_hi - f_lo) / prob
    g_theta = np.zeros(K - 1)
    np.add.at(g_theta, d.y[d.y < K - 1], -(f_hi / prob)[d.y < K - 1])
    np.add.at(g_theta, d.y[d.y > 0] - 1, (f_lo / prob)[d.y > 0])
    g_a = np.empty(K - 1)
    g_a[0] = g_theta.sum()
    tail = np.cumsum(g_theta[::-1])[::-1]
    g_a[1:] = np.exp(a[1:]) * tail[1:]
    g_w = np.bincount(d.item, weights=g_eta, minlength=d.z.shape[0]) @ d.z + lam_w * w
    g_b = np.zeros(len(b))
    if len(b):
        keep = d.rater >= 0
        g_b = np.bincount(d.rater[keep], weights=g_eta[keep], minlength=len(b)) + lam_b * b
    return nll, np.concatenate([g_a, g_w, g_b])


def _start(y: np.ndarray, K: int) -> np.ndarray:
    """Cut points at the logits of the empirical cumulative shares (smoothed)."""
    counts = np.bincount(y, minlength=K).astype(float) + 0.5
    cum = np.cumsum(counts)[:-1] / counts.sum()
    theta = np.log(cum / (1.0 - cum))
    steps = np.maximum(np.diff(theta), 1e-3)
    return np.concatenate([theta[:1], np.log(steps)])


def fit_ordinal(
    d: OrdinalData,
    *,
    lam_w: float,
    lam_b: float,
    levels: Sequence[int],
    rater_ids: Sequence[str] = (),
) -> OrdinalHead:
    """The penalised maximum-likelihood head (BFGS, analytic gradient).

    Raises
    ------
    ValueError
        No ratings, or a level index outside the scale.
    """
    K, p = d.n_levels, d.z.shape[1]
    if len(d.y) == 0:
        raise ValueError("no ratings to fit")
    if d.y.min() < 0 or d.y.max() >= K:
        raise ValueError("a level index is outside the scale")
    x0 = np.concatenate([_start(d.y, K), np.zeros(p), np.zeros(d.n_raters)])
    res = minimize(
        ordinal_nll,
        x0,
        args=(d, lam_w, lam_b),
        jac=True,
        method="BFGS",
        options={"maxiter": 5000, "gtol": 1e-6},
    )
    a, w, b = res.x[: K - 1], res.x[K - 1 : K - 1 + p], res.x[K - 1 + p :]
    return OrdinalHead(
        levels=[int(v) for v in levels],
        cuts=[float(v) for v in _cuts(a)],
        weights=[float(v) for v in w],
        rater_offsets={str(r): float(v) for r, v in zip(rater_ids, b, strict=True)},
        n_ratings=len(d.y),
    )
