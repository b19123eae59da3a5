"""Batched Bradley–Terry fit: all win matrices of a bootstrap refitted at once by Newton.

By default the fit is the unpenalised maximum-likelihood estimate (``l2 = 0``), identified by
``Σ β = 0``. The MLE exists and is unique exactly when the directed "beat or tied" graph of the
models is strongly connected (Zermelo 1929; Ford 1957); ``bt_identifiable`` checks that for a
whole batch at once. ``l2 > 0`` fits a ridge-penalised ``l2/2 · ||β||²`` likelihood instead.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from attune_judge.calibration.resampling._bootstrap import FloatArray

__all__ = ["IntArray", "bt_identifiable", "bt_sandwich_covariance", "fit_bradley_terry_batch"]

IntArray = NDArray[np.intp]


def bt_identifiable(wins: FloatArray, chunk_cells: int = 4_000_000) -> NDArray[np.bool_]:
    """Whether the Bradley–Terry MLE exists and is unique, per win matrix (K, p, p).

    True when the directed graph with an edge i → j whenever ``wins[i, j] > 0`` (i beat or
    tied j at least once) is strongly connected over the models that have any comparison
    (Zermelo 1929; Ford 1957). Checked for all matrices at once by repeated squaring of the
    reachability matrices, in chunks of about ``chunk_cells`` cells.
    """
    W = np.asarray(wins, dtype=np.float64)
    K, p, _ = W.shape
    out = np.empty(K, dtype=bool)
    step = max(1, chunk_cells // max(1, p * p))
    for s0 in range(0, K, step):
        w = W[s0 : s0 + step]
        present = (w.sum(2) + w.sum(1)) > 0  # (k, p)
        R = ((w > 0) | np.eye(p, dtype=bool)[None]).astype(np.float64)
        for _ in range(int(np.ceil(np.log2(max(p, 2))))):
            R = np.minimum(R @ R, 1.0)
        # every present model reaches every present model
        need = present[:, :, None] & present[:, None, :]
        out[s0 : s0 + step] = np.all((R > 0) | ~need, axis=(1, 2)) & (present.sum(1) >= 2)
    return out


def fit_bradley_terry_batch(
    wins: FloatArray,
    *,
    l2: float = 0.0,
    max_iter: int = 100,
    tol: float = 1e-10,
    start: FloatArray | None = None,
    warm_steps: int = 2,
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Fit Bradley–Terry log-strengths for a batch of win matrices at once.

    Parameters
    ----------
    wins
        Shape (K, p, p); ``wins[k, i, j]`` = weighted wins of i over j.
    l2
        Ridge penalty; 0 (default) fits the unbiased MLE. With ``l2 = 0`` a matrix whose MLE
        does not exist (``bt_identifiable`` false: separation, or groups never compared) is
        not fitted: its row of ``beta`` is NaN and it counts as not converged.
    max_iter, tol
        Newton iterations and convergence threshold: a matrix is converged (and left alone
        from then on) once the largest component of its last Newton step is below ``tol``.
    start
        Starting strengths, shape (p,) (the same for every matrix, e.g. the point estimate when
        fitting bootstrap replicates) or (K, p); zeros by default. NaN counts as 0.
    warm_steps
        Cheap warm-up steps before Newton: ``β ← β + H₀⁻¹ g(β)`` with one shared Hessian
        ``H₀`` (of the batch's mean win matrix at the mean start), so no per-matrix solve.
        A matrix keeps such a step only if it shrinks its largest gradient component; the
        Newton iterations that follow decide convergence as usual.

    Returns
    -------
    (beta, converged)
        ``beta`` (K, p) centred to mean 0, with NaN for models without any comparison in that
        matrix (and for whole matrices without an MLE when ``l2 = 0``); a boolean ``converged``
        per matrix.

    Notes
    -----
    The fit works on the ``p(p-1)/2`` unordered pairs: with ``n_ij = W_ij + W_ji`` and
    ``P_ij = σ(β_i − β_j)`` the gradient is ``Aᵀ(W_ij − n_ij P_ij) − l2·β`` and the negative
    Hessian ``Aᵀ diag(n_ij P_ij (1 − P_ij)) A + l2·I`` for the pair-incidence matrix ``A``
    (+1 for i, −1 for j). That matrix is singular along ``Σ β`` (and, for models without
    comparisons, along theirs) when ``l2 = 0``; the linear solve adds ``11ᵀ``, a unit diagonal
    for absent models and a 1e-10 relative jitter, none of which moves the fixed point (the
    gradient is orthogonal to those directions). Each Newton iteration is one batched
    ``numpy.linalg.solve`` on the matrices not yet converged. Far from the optimum a step is
    shortened until it lowers the penalised objective (``_safeguard``); only a full Newton step
    can end a matrix's iterations.
    """
    W = np.asarray(wins, dtype=np.float64)
    K, p, _ = W.shape
    if l2 < 0:
        raise ValueError("l2 must be >= 0")
    pairs = _Pairs.of(W, l2)
    ok = bt_identifiable(W) if l2 == 0 else np.ones(K, dtype=bool)
    absent = (pairs.inc_abs.T @ pairs.half_n) <= 0  # (p, K)
    gauge = np.where(absent, 1.0, 0.0)
    # Internally every array keeps the batch on its last axis (models or pairs × K), so the
    # per-pair gathers and the Hessian scatter below move whole contiguous rows.
    beta = np.zeros((p, K))
    if start is not None:
        beta[:] = np.broadcast_to(np.nan_to_num(start), (K, p)).T
    q = len(pairs.i)
    # one buffer, allocated (and its pages touched) once: the (pairs × m) temporaries of
    # _grad_curv, and after it the (p·p × m) Hessian over the two that are dead by then
    work = np.empty((q + max(2 * q, p * p)) * K)
    if warm_steps > 0 and K > 1:
        _warm_up(beta, pairs, warm_steps, work)
    done = np.zeros(K, dtype=bool)
    act = np.flatnonzero(ok)
    upper, lower, diag = pairs.i * p + pairs.j, pairs.j * p + pairs.i, np.arange(p) * (p + 1)
    for _ in range(max_iter if len(act) else 0):
        cols: slice | IntArray = slice(None) if len(act) == K else act
        b = beta[:, cols]
        grad2, v2 = _grad_curv(b, pairs, cols, work)
        # 2·(negative Hessian), laid out (p·p × m); solved for the Newton step with 2·gradient
        m = len(act)
        H2 = work[q * m : (q + p * p) * m].reshape(p * p, m)
        np.negative(v2, out=v2)
        H2[upper] = H2[lower] = v2
        H2[diag] = 2 * l2 - pairs.inc_abs.T @ v2
        if l2 == 0:
            scale = np.max(np.abs(H2[diag]), axis=0) + 1.0
            H2 += scale / p
            H2[diag] += gauge[:, cols] * scale + 1e-10 * scale
        H2_batch = H2.reshape(p, p, -1).transpose(2, 0, 1)
        step = np.asarray(
            np.linalg.solve(H2_batch, grad2.T[:, :, None])[:, :, 0].T, dtype=np.float64
        )
        full_newton = _safeguard(step, b, grad2, pairs, cols)
        beta[:, cols] = b + step
        fin = full_newton & (np.max(np.abs(step), axis=0) < tol)
        done[act[fin]] = True
        act = act[~fin]
        if len(act) == 0:
            break
    present = ~absent
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = np.sum(beta * present, axis=0) / present.sum(0)
    out = beta.T - centre[:, None]
    out[absent.T] = np.nan
    out[~ok] = np.nan
    return out, done


class _Pairs(NamedTuple):
    """The batch on unordered pairs ``i < j`` (pairs × K)."""

    i: IntArray
    """First model of each pair."""
    j: IntArray
    """Second model of each pair."""
    inc: FloatArray
    """Pair-incidence matrix (pairs × p): +1 at i, −1 at j."""
    inc_abs: FloatArray
    """``|inc|``: sums pair quantities onto both models."""
    half_n: FloatArray
    """``n_ij / 2`` per pair and matrix (pairs × K)."""
    excess: FloatArray
    """``W_ij − n_ij / 2`` per pair and matrix."""
    l2: float
    """Ridge penalty."""

    @classmethod
    def of(cls, W: FloatArray, l2: float) -> _Pairs:
        p = W.shape[1]
        i, j = np.triu_indices(p, 1)
        inc = np.zeros((len(i), p))
        inc[np.arange(len(i)), i] = 1.0
        inc[np.arange(len(i)), j] = -1.0
        flat = W.reshape(len(W), p * p).T
        excess = flat[i * p + j]
        half_n = flat[j * p + i]
        half_n += excess
        half_n *= 0.5
        excess -= half_n
        return cls(i, j, inc, np.abs(inc), half_n, excess, l2)


def _grad_curv(
    b: FloatArray,
    pairs: _Pairs,
    cols: slice | IntArray,
    work: FloatArray,
    curvature: bool = True,
) -> tuple[FloatArray, FloatArray]:
    """Twice the gradient (p × m) and twice the pair curvatures ``n P (1 − P)`` (pairs × m).

    ``P_ij = σ(β_i − β_j) = (1 + t) / 2`` with ``t = tanh((β_i − β_j) / 2)`` (no overflow), so
    ``2(W_ij − n_ij P_ij) = 2(W_ij − n_ij/2) − n_ij·t`` and ``2 n P (1 − P) = (n/2)(1 − t²)``.
    The three (pairs × m) temporaries live in ``work`` (flat, at least ``3 · pairs · m``) instead
    of fresh allocations: large fresh arrays cost page faults on every iteration. The
    curvature array returned is a view of the first ``pairs · m`` of ``work``; without
    ``curvature`` it is empty.
    """
    q, m = len(pairs.i), b.shape[1]
    t = work[: q * m].reshape(q, m)
    u = work[q * m : 2 * q * m].reshape(q, m)
    r = work[2 * q * m : 3 * q * m].reshape(q, m)
    half = 0.5 * b
    np.take(half, pairs.i, axis=0, out=t, mode="clip")
    np.take(half, pairs.j, axis=0, out=u, mode="clip")
    np.subtract(t, u, out=t)
    np.tanh(t, out=t)
    h = pairs.half_n[:, cols]
    ht = np.multiply(h, t, out=u)
    grad2 = pairs.inc.T @ np.subtract(pairs.excess[:, cols], ht, out=r)
    grad2 *= 2
    grad2 -= (2 * pairs.l2) * b
    if not curvature:
        return grad2, np.empty((0, 0))
    np.multiply(ht, t, out=t)
    return grad2, np.subtract(h, t, out=t)


SAFE_STEP = 0.34
"""Largest step component that surely lowers the objective (see ``_safeguard``)."""


def _safeguard(
    step: FloatArray, b: FloatArray, grad2: FloatArray, pairs: _Pairs, cols: slice | IntArray
) -> NDArray[np.bool_]:
    """Shorten Newton steps (in place) so that each one lowers the penalised objective.

    A pair's curvature ``P(1 − P)`` changes by at most a factor ``e^{|Δd|}`` when its
    difference d moves by Δd, so along a step with largest component s the Hessian stays
    within a factor ``c = e^{2s}`` of the current one and the objective changes by at most
    ``(c/2 − 1)·λ²`` (λ² = Newton decrement): a decrease whenever ``s < ln 2 / 2 ≈ 0.347``.
    Such steps (all of them near the optimum) are taken as they are; larger ones are capped at
    3 and then halved until the objective drops (Armijo, 1e-4). Returns which matrices took
    their full Newton step (only those may be declared converged).
    """
    size = np.max(np.abs(step), axis=0)
    big = size > SAFE_STEP
    full = ~big
    if not big.any():
        return full
    idx = np.flatnonzero(big)
    rows = idx if isinstance(cols, slice) else cols[idx]
    sub = pairs._replace(half_n=pairs.half_n[:, rows], excess=pairs.excess[:, rows])
    shrunk = size[idx] > 3.0
    step[:, idx] *= np.minimum(1.0, 3.0 / size[idx])
    b0 = b[:, idx]
    f0 = _objective(b0, sub)
    slope = 0.5 * np.einsum("pm,pm->m", grad2[:, idx], step[:, idx])  # -∇fᵀδ > 0
    pending = np.ones(len(idx), dtype=bool)
    for _ in range(60):
        f1 = _objective(b0[:, pending] + step[:, idx[pending]], _cols_of(sub, pending))
        ok = f1 <= f0[pending] - 1e-4 * slope[pending]
        still = np.flatnonzero(pending)[~ok]
        pending[:] = False
        pending[still] = True
        if not pending.any():
            break
        step[:, idx[pending]] *= 0.5
        slope[pending] *= 0.5
        shrunk |= pending
    full[idx] = ~shrunk
    return full


def _cols_of(pairs: _Pairs, keep: NDArray[np.bool_]) -> _Pairs:
    return pairs._replace(half_n=pairs.half_n[:, keep], excess=pairs.excess[:, keep])


def _objective(b: FloatArray, pairs: _Pairs) -> FloatArray:
    """Penalised negative log-likelihood per matrix (columns of ``b`` and of ``pairs``).

    Per pair ``W_ij·softplus(−d) + W_ji·softplus(d)`` with ``W_ij = n/2 + e``, ``W_ji = n/2 − e``
    equals ``(n/2)(|d| + 2·log1p(e^{−|d|})) − e·d``.
    """
    d = np.take(b, pairs.i, axis=0) - np.take(b, pairs.j, axis=0)
    ad = np.abs(d)
    per_pair = pairs.half_n * (ad + 2 * np.log1p(np.exp(-ad))) - pairs.excess * d
    return np.asarray(per_pair.sum(axis=0) + 0.5 * pairs.l2 * np.sum(b * b, axis=0))


def _warm_up(beta: FloatArray, pairs: _Pairs, steps: int, work: FloatArray) -> None:
    """Shared-Hessian (chord) steps in place; each matrix keeps a step only if it helps.

    ``H₀`` is the negative Hessian of the batch's mean win matrix at the mean start.
    """
    cols = slice(None)
    g2, _ = _grad_curv(beta, pairs, cols, work, curvature=False)
    mean = pairs._replace(
        half_n=pairs.half_n.mean(axis=1, keepdims=True),
        excess=pairs.excess.mean(axis=1, keepdims=True),
    )
    _, v2 = _grad_curv(beta.mean(axis=1, keepdims=True), mean, cols, work)
    H0_2 = (pairs.inc.T * v2[:, 0]) @ pairs.inc + 2 * pairs.l2 * np.eye(pairs.inc.shape[1])
    H0inv = np.linalg.pinv(H0_2) if pairs.l2 == 0 else np.linalg.inv(H0_2)
    gmax = np.max(np.abs(g2), axis=0)
    for _ in range(steps):
        cand = beta + np.clip(H0inv @ g2, -3.0, 3.0)
        g2_new, _ = _grad_curv(cand, pairs, cols, work, curvature=False)
        gmax_new = np.max(np.abs(g2_new), axis=0)
        ok = gmax_new < gmax
        beta[:, ok], g2[:, ok], gmax[ok] = cand[:, ok], g2_new[:, ok], gmax_new[ok]


def bt_sandwich_covariance(
    cluster_wins: FloatArray,
    weights: FloatArray,
    beta: FloatArray,
    *,
    l2: float = 0.0,
    chunk_cells: int = 4_000_000,
) -> FloatArray:
    """Cluster-robust (sandwich) covariance of Bradley–Terry strengths, one per weight row.

    Parameters
    ----------
    cluster_wins
        Per-cluster win tables (C, p, p) (``win_tables``).
    weights
        Cluster weights (k, C): a row of ones for the full data, bootstrap weights for
        replicates (each drawn copy of a cluster counts as a cluster).
    beta
        The fit of each row (k, p) (e.g. ``fit_bradley_terry_batch`` on ``weights @
        cluster_wins``). A model whose strength is NaN in a row (absent from that resample,
        or fitted out of it) is left out of that row: its comparisons count for nobody and
        its rows and columns of the covariance are NaN.

    Returns
    -------
    numpy.ndarray
        Shape (k, p, p): ``A⁻¹ M A⁻¹`` with ``A`` the negative Hessian of the weighted
        log-likelihood (plus ``l2·I``), ``M = C/(C−1) · Σ_c w_c (s_c − s̄)(s_c − s̄)ᵀ`` and
        ``s_c,i = Σ_j (W_c,ij − n_c,ij σ(β_i − β_j))`` cluster c's score (``s̄`` its weighted
        mean, 0 at the unpenalised MLE). With ``l2 = 0`` the Hessian is singular along
        ``1``; ``A = H + 11ᵀ`` then gives ``H⁺ M H⁺`` (the score is orthogonal to ``1``): the
        covariance of the strengths centred to mean 0.
    """
    T = np.asarray(cluster_wins, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    b = np.asarray(beta, dtype=np.float64)
    C, p, _ = T.shape
    N = T + np.transpose(T, (0, 2, 1))
    won = T.sum(2)  # (C, p)
    infl = C / max(C - 1, 1)
    out = np.empty((len(W), p, p))
    step = max(1, chunk_cells // max(1, C * p * p))
    for a in range(0, len(W), step):
        w, bb = W[a : a + step], b[a : a + step]
        fin = np.isfinite(bb)
        P = 0.5 * (1 + np.tanh(0.5 * (np.where(fin, bb, 0)[:, :, None] - bb[:, None, :])))
        if fin.all():
            s = won[None] - np.einsum("cij,kij->kci", N, P)  # (k, C, p)
            V = np.einsum("kc,cij->kij", w, N) * P * (1 - P)
        else:  # a model without a strength in a row: its comparisons left out of that row
            Q = (fin[:, :, None] & fin[:, None, :]).astype(np.float64)
            P = np.nan_to_num(P) * Q
            s = np.einsum("cij,kij->kci", T, Q) - np.einsum("cij,kij->kci", N, P)
            V = np.einsum("kc,cij->kij", w, N) * P * (1 - P)
        sbar = np.einsum("kc,kcp->kp", w, s) / w.sum(1)[:, None]
        d = s - sbar[:, None, :]
        M = infl * np.einsum("kc,kcp,kcq->kpq", w, d, d)
        A = -V
        A[:, np.arange(p), np.arange(p)] = V.sum(2) - V[:, np.arange(p), np.arange(p)]
        A += l2 * np.eye(p) if l2 > 0 else 1.0
        A[:, np.arange(p), np.arange(p)] += ~fin  # gauge of the left-out models
        Y = np.linalg.solve(A, M)
        cov = np.linalg.solve(A, np.transpose(Y, (0, 2, 1)))
        cov[~fin[:, :, None] | ~fin[:, None, :]] = np.nan
        out[a : a + step] = cov
    return out
