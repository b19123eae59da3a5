"""Weighted logistic regression with soft labels, fitted for many bootstrap replicates at once.

The engine of the style-controlled rankings (``_style``): a judge's preference ``y ∈ [0, 1]``
(a verdict, ½ for a tie, or a probability) is modelled as ``P(first wins) = σ(x·θ)``; the
log-likelihood ``Σ_r w_r [y_r log σ(x_r·θ) + (1 − y_r) log σ(−x_r·θ)]`` is concave, so
Newton's method with step halving finds its maximum. A replicate of the cluster bootstrap is a
row of cluster weights; all replicates are fitted together (one ``(B, d, d)`` Hessian per
step), started from the point estimate. An optional Gaussian prior ``½ (θ − m)ᵀ Λ (θ − m)``
penalises the fit.

``sandwich`` gives the cluster-robust covariance of each replicate's fit (clusters drawn k
times count k times), for studentized intervals and rank sets.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attune_judge.calibration.resampling._bootstrap import FloatArray

__all__ = ["fit_soft_logistic", "sandwich", "sigmoid"]

MAX_COEF = 30.0
"""|θ| beyond which a fit is taken as separated (no finite maximum-likelihood estimate)."""


def sigmoid(z: FloatArray) -> FloatArray:
    """``1 / (1 + e^{−z})`` without overflow."""
    return np.exp(-np.logaddexp(0.0, -z))


def _loss(z: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
    return np.sum(w * (np.logaddexp(0.0, z) - y * z), axis=-1)


def fit_soft_logistic(
    X: FloatArray,
    y: FloatArray,
    weights: FloatArray,
    *,
    precision: FloatArray | None = None,
    mean: FloatArray | None = None,
    start: FloatArray | None = None,
    max_iter: int = 100,
    tol: float = 1e-8,
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Maximum-(penalised-)likelihood θ for each row of ``weights``.

    Parameters
    ----------
    X, y
        Design ``(n, d)`` and soft labels ``(n,)`` in [0, 1].
    weights
        Row weights ``(B, n)`` (one replicate per row; ``np.ones((1, n))`` for the fit itself).
    precision, mean
        Gaussian prior: precision ``(d, d)`` and mean ``(d,)`` (default none).
    start
        Starting θ, ``(d,)`` or ``(B, d)``; default 0.

    Returns
    -------
    (theta, converged)
        ``(B, d)`` estimates and a ``(B,)`` flag: converged with every |θ| ≤ ``MAX_COEF``
        (larger means separated data: no finite estimate).
    """
    Bn, d = weights.shape[0], X.shape[1]
    P = np.zeros((d, d)) if precision is None else np.asarray(precision, dtype=np.float64)
    m = np.zeros(d) if mean is None else np.asarray(mean, dtype=np.float64)
    theta = np.zeros((Bn, d)) if start is None else np.broadcast_to(start, (Bn, d)).copy()

    f = objective_rows(theta, X, y, weights, P, m)
    done = np.zeros(Bn, dtype=bool)
    for _ in range(max_iter):
        act = np.flatnonzero(~done)
        if not len(act):
            break
        th, w = theta[act], weights[act]
        mu = sigmoid(th @ X.T)
        grad = (w * (mu - y)) @ X + (th - m) @ P
        H = np.einsum("bn,ni,nj->bij", w * mu * (1 - mu), X, X) + P
        H += 1e-10 * np.eye(d)
        try:
            step = np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H.sum(0), grad.T, rcond=None)[0].T
        t = np.ones(len(act))
        new = th - step
        f_new = objective_rows(new, X, y, w, P, m)
        for _half in range(30):
            worse = f_new > f[act] + 1e-12 * np.abs(f[act])
            if not worse.any():
                break
            t[worse] /= 2
            new[worse] = th[worse] - t[worse, None] * step[worse]
            f_new[worse] = objective_rows(new[worse], X, y, w[worse], P, m)
        theta[act] = new
        f[act] = f_new
        # converged: a Newton step that no longer moves θ (separated data never get there:
        # θ keeps growing, and is stopped, and flagged, past MAX_COEF)
        conv = np.abs(step * t[:, None]).max(axis=1) < tol
        conv |= np.abs(new).max(axis=1) > 2 * MAX_COEF
        done[act[conv]] = True
    ok = done & np.all(np.isfinite(theta), axis=1) & (np.abs(theta).max(axis=1) <= MAX_COEF)
    return theta, ok


def objective_rows(
    th: FloatArray, X: FloatArray, y: FloatArray, w: FloatArray, P: FloatArray, m: FloatArray
) -> FloatArray:
    """The penalised negative log-likelihood of each row of ``th`` (weights ``w`` per row)."""
    dev = th - m
    return _loss(th @ X.T, y, w) + 0.5 * np.einsum("bi,ij,bj->b", dev, P, dev)


def sandwich(
    X: FloatArray,
    y: FloatArray,
    row_weights: FloatArray,
    cluster_of_row: np.ndarray,
    cluster_weights: FloatArray,
    theta: FloatArray,
    precision: FloatArray | None = None,
) -> FloatArray:
    """Cluster-robust covariance ``H⁻¹ M H⁻¹`` of each replicate's θ, ``(B, d, d)``.

    ``row_weights`` (n,) are the fixed weights of the rows (1 for data), ``cluster_weights``
    (B, C) the replicate's cluster counts; ``M = C/(C−1) Σ_c k_c u_c u_cᵀ`` with ``u_c`` the
    cluster's score at the replicate's θ.
    """
    C = cluster_weights.shape[1]
    d = X.shape[1]
    w = cluster_weights[:, cluster_of_row] * row_weights[None, :]  # (B, n)
    mu = sigmoid(theta @ X.T)
    H = np.einsum("bn,ni,nj->bij", w * mu * (1 - mu), X, X)
    if precision is not None:
        H = H + precision
    r = row_weights[None, :] * (mu - y)  # (B, n) unweighted by the replicate
    order = np.argsort(cluster_of_row, kind="stable")
    cl = cluster_of_row[order]
    starts = np.flatnonzero(np.r_[True, cl[1:] != cl[:-1]])
    U = np.add.reduceat(r[:, order, None] * X[order][None, :, :], starts, axis=1)  # (B, C', d)
    k = cluster_weights[:, cl[starts]]  # (B, C')
    M = np.einsum("bc,bci,bcj->bij", k, U, U) * (C / max(C - 1, 1))
    Hinv = np.linalg.pinv(H + 1e-12 * np.eye(d))
    return np.asarray(Hinv @ M @ Hinv)
