"""Bradley–Terry strengths from pairwise outcomes, bootstrapped by re-weighting clusters.

Win counts ``W_ij`` (i beat j; a tie is half a win for each side) are summed per cluster once.
A bootstrap replicate re-weights clusters, ``W*_ij = Σ_c w_c W_c,ij``, and all replicates are
refitted at once by a batched Newton method (one ``(B × p × p)`` linear solve per iteration),
started from the point estimate.
By default the fit is the unpenalised maximum-likelihood estimate (``l2 = 0``), identified by
``Σ β = 0``. The MLE exists and is unique exactly when the directed "beat or tied" graph of the
models is strongly connected (Zermelo 1929; Ford 1957): otherwise some group of models never lost
to the rest (separation) or two groups were never compared, and their strengths run off to ±∞
or are not identified. Such data are refused with a message naming the models (or fitted with
a ridge penalty ``l2/2 · ||β||²`` when ``l2 > 0`` is asked for, which shrinks strengths towards
each other: a bias of order ``l2`` in β); bootstrap replicates in which it happens, and
replicates whose Newton fit does not converge, are dropped and counted, never kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from pydantic import PrivateAttr

from attune_judge.calibration._bootstrap import (
    MAX_UNDEFINED_SHARE,
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

__all__ = [
    "BradleyTerryResult",
    "bradley_terry",
    "bt_identifiable",
    "fit_bradley_terry_batch",
    "win_tables",
]

ELO_SCALE = 400 / np.log(10)
IntArray = NDArray[np.intp]


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


def _separation_message(total: FloatArray, models: list[str]) -> str:
    """Why the MLE does not exist, naming models that never lost or never won."""
    p = len(models)
    won = (total > 0).sum(1)
    lost = (total > 0).sum(0)
    present = (total.sum(0) + total.sum(1)) > 0
    never_lost = [models[i] for i in range(p) if present[i] and lost[i] == 0]
    never_won = [models[i] for i in range(p) if present[i] and won[i] == 0]
    detail = []
    if never_lost:
        detail.append(f"never lost or tied: {never_lost[:5]}")
    if never_won:
        detail.append(f"never won or tied: {never_won[:5]}")
    return (
        "Bradley–Terry: the maximum-likelihood strengths do not exist on these data — some "
        "group of models never lost to the others (or two groups were never compared)"
        + (f" ({'; '.join(detail)})" if detail else "")
        + "; compare more pairs, or pass l2 > 0 for a penalised (shrunk) fit"
    )


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
    """Ridge penalty of the fit (0: the unbiased maximum-likelihood estimate)."""
    rank_sets_simultaneous: RankSets
    """Simultaneous 95% confidence sets for ranks (bootstrap covariance of β)."""
    rank_sets_marginal: RankSets
    """Marginal confidence sets for ranks."""
    rank_probabilities: RankProbabilities
    """P(rank = 1), P(rank ≤ k)."""
    n_unconverged: int
    """Replicates whose Newton fit did not converge (dropped and counted)."""
    n_separated: int = 0
    """Replicates without an MLE (a group of models never lost to the rest, or groups never
    compared; only with ``l2 = 0``): dropped from intervals, covariance and rank sets."""
    n_used: int = 0
    """Replicates used: ``B − n_separated − n_unconverged``."""
    note: str | None = None
    """Caveats (dropped replicates, a penalised fit)."""

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
    l2: float = 0.0,
) -> BradleyTerryResult:
    """Fit Bradley–Terry and bootstrap it by re-weighting clusters (all replicates at once).

    Parameters
    ----------
    model_a, model_b, winners, clusters
        One entry per comparison: the two models, the winner (``A``, ``B``, ``tie``, ``None``
        = skip) and the cluster (conversation) it belongs to.
    B, level, seed, scheme, method
        Replicates, confidence level, seed, weight scheme, interval method.
    l2
        Ridge penalty; 0 (default) is the unbiased MLE, which needs every model to have won
        (or tied) and lost against the others in a connected way (see the module notes):
        otherwise a ``UserError`` names the models; ``l2 > 0`` then gives a penalised fit.

    Notes
    -----
    Replicates without an MLE (``l2 = 0``) and replicates that do not converge are dropped
    from intervals, the covariance and the rank sets, and counted (``n_separated``,
    ``n_unconverged``); when more than 10% are dropped the result's ``note`` says so.
    """
    models, _clusters, T = win_tables(model_a, model_b, winners, clusters)
    if len(models) < 2:
        raise UserError("Bradley–Terry needs comparisons between at least two models")
    if l2 < 0:
        raise UserError(f"l2 must be >= 0, not {l2}")
    C, p = T.shape[0], len(models)
    flat = T.reshape(C, p * p)
    total = T.sum(0)
    if l2 == 0 and not bt_identifiable(total[None])[0]:
        raise UserError(_separation_message(total, models))
    fit, conv0 = fit_bradley_terry_batch(total[None], l2=l2)
    if not conv0[0]:
        raise UserError("the Bradley–Terry fit did not converge on the full data")
    beta_hat = fit[0]
    Wt = bootstrap_weights(C, B, seed, scheme)
    # the point estimate is the natural start for every replicate (and jackknife fit)
    rep_wins = (Wt @ flat).reshape(B, p, p)
    separated = ~bt_identifiable(rep_wins) if l2 == 0 else np.zeros(B, dtype=bool)
    reps, conv = fit_bradley_terry_batch(rep_wins, l2=l2, start=beta_hat)
    unconverged = ~conv & ~separated
    reps[~conv] = np.nan
    jack = None
    if method == "bca" and C >= 3:
        jack_wins = ((1 - np.eye(C)) @ flat).reshape(C, p, p)
        jack = fit_bradley_terry_batch(jack_wins, l2=l2, start=beta_hat)[0]
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
                note=e.note,
            )
        )
    ok = np.all(np.isfinite(reps), axis=1)
    if ok.sum() < 2:
        raise UserError(
            f"Bradley–Terry: only {int(ok.sum())} of {B} bootstrap replicates have a fit "
            f"({int(separated.sum())} without an MLE, {int(unconverged.sum())} unconverged); "
            "too few comparisons per conversation — collect more, or set l2 > 0"
        )
    cov = np.cov(reps[ok], rowvar=False)
    theta = np.nan_to_num(beta_hat)
    dropped = B - int(ok.sum())
    notes = []
    if dropped:
        notes.append(
            f"{dropped} of {B} replicates dropped ({int(separated.sum())} without an MLE, "
            f"{int(unconverged.sum())} unconverged)"
            + (
                "; more than 10% dropped: the intervals describe only the replicates with a "
                "fit and are too narrow"
                if dropped > MAX_UNDEFINED_SHARE * B
                else ""
            )
        )
    if l2 > 0:
        notes.append(f"penalised fit (l2={l2}): strengths are shrunk towards each other")
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
        n_unconverged=int(unconverged.sum()),
        n_separated=int(separated.sum()),
        n_used=int(ok.sum()),
        note="; ".join(notes) or None,
    )
    out._replicates = reps
    return out
