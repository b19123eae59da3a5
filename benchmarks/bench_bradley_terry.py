"""Bradley–Terry bootstrap: all replicates refitted at once vs a per-replicate SciPy refit.

11 models, 200 conversations × 10 comparisons (10% ties), B = 1,000 (issue 5: target >= 50x).

    python benchmarks/bench_bradley_terry.py [--B 1000] [--scipy-B 200] [--repeat 15]
                                             [--scipy-repeat 5] [--full] [--blas-threads 1]

Both sides do the same work from the same per-conversation win tables and the same weights
matrix: build each replicate's win matrix ``W*_k = Σ_c w_kc W_c``, and fit it starting from the
point estimate β̂ (whose own fit is timed on the batched side).

- batched: one ``(B × C) @ (C × p²)`` product, then ``fit_bradley_terry_batch`` for all B
  (Newton, every replicate iterated until its last step is below 1e-10).
- SciPy: a loop over replicates with ``scipy.optimize.minimize`` on the same penalised
  log-likelihood with its analytic gradient. Several ordinary configurations are timed and the
  FASTEST one whose fits agree with the batched ones to <= 1e-6 is the baseline (so the
  baseline is not made slow by an over-tight tolerance, nor fast by a sloppy one). It is timed
  on ``--scipy-B`` replicates and scaled to B (``--full``: all B).

Each side is run several times; the minimum and the median wall time are printed, with the
process CPU time, and the speed-up is given for both (median / median is the headline). BLAS
is limited to ``--blas-threads`` (default 1: a one-core comparison; the matrices are tiny, and
on a shared machine extra threads only add noise). The 1-minute load average is printed at the
start and the end: on a loaded machine wall times include waiting for a core.
"""

from __future__ import annotations

import argparse
import os
import sys


def _blas_threads_from_argv() -> str:
    """``--blas-threads`` must be applied before NumPy is imported."""
    for k, arg in enumerate(sys.argv):
        if arg == "--blas-threads" and k + 1 < len(sys.argv):
            return sys.argv[k + 1]
        if arg.startswith("--blas-threads="):
            return arg.split("=", 1)[1]
    return "1"


for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _blas_threads_from_argv()

import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from scipy import optimize  # noqa: E402

from attune_judge.calibration import (  # noqa: E402
    bootstrap_weights,
    fit_bradley_terry_batch,
    win_tables,
)

P, C, K = 11, 200, 10
L2 = 0.01
AGREE = 1e-6  # a SciPy configuration qualifies as the baseline only within this of the batch


def make_data(seed: int = 0) -> tuple[list[str], list[str], list[str], list[int]]:
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1, 1, P)
    a, b, w, c = [], [], [], []
    for conv in range(C):
        for _ in range(K):
            i, j = rng.choice(P, 2, replace=False)
            p = 1 / (1 + np.exp(strength[j] - strength[i]))
            u = rng.random()
            a.append(f"m{i:02d}")
            b.append(f"m{j:02d}")
            w.append("tie" if u < 0.1 else "A" if u < 0.1 + 0.9 * p else "B")
            c.append(conv)
    return a, b, w, c


def penalised_nll(W: np.ndarray) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """Negative penalised log-likelihood of one win matrix and its analytic gradient."""

    def f(beta: np.ndarray) -> tuple[float, np.ndarray]:
        d = beta[:, None] - beta[None, :]
        nll = np.sum(W * np.logaddexp(0, -d)) + L2 / 2 * beta @ beta
        ws = W / (1 + np.exp(d))  # W_ij · P(j beats i)
        return float(nll), ws.sum(axis=0) - ws.sum(axis=1) + L2 * beta

    return f


def penalised_hess(W: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Its analytic Hessian (for the second-order methods)."""
    N = W + W.T

    def h(beta: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.exp(-(beta[:, None] - beta[None, :])))
        V = N * p * (1 - p)
        return np.diag(V.sum(axis=1) + L2) - V

    return h


# (label, method, options, uses the Hessian): ordinary choices a user would write
SCIPY_CONFIGS: list[tuple[str, str, dict[str, float], bool]] = [
    ("L-BFGS-B, default tolerances", "L-BFGS-B", {}, False),
    ("L-BFGS-B, gtol 1e-7, ftol 1e-12", "L-BFGS-B", {"gtol": 1e-7, "ftol": 1e-12}, False),
    ("L-BFGS-B, gtol 1e-9, ftol 1e-14", "L-BFGS-B", {"gtol": 1e-9, "ftol": 1e-14}, False),
    ("BFGS, default tolerances", "BFGS", {}, False),
    ("trust-exact + Hessian, gtol 1e-6", "trust-exact", {"gtol": 1e-6}, True),
    ("Newton-CG + Hessian, xtol 1e-8", "Newton-CG", {"xtol": 1e-8}, True),
]


def scipy_loop(
    Wt: np.ndarray, flat: np.ndarray, start: np.ndarray, n: int, config: int
) -> np.ndarray:
    """Refit replicates 0..n-1 one by one (building each replicate's win matrix too)."""
    _, method, options, hess = SCIPY_CONFIGS[config]
    out = np.empty((n, P))
    for k in range(n):
        W = (Wt[k] @ flat).reshape(P, P)
        res = optimize.minimize(
            penalised_nll(W),
            start,
            jac=True,
            hess=penalised_hess(W) if hess else None,
            method=method,
            options=options,
        )
        out[k] = res.x - res.x.mean()
    return out


def batched(
    Wt: np.ndarray, flat: np.ndarray, total: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point estimate, then every replicate at once started from it."""
    beta_hat = fit_bradley_terry_batch(total[None], l2=L2)[0][0]
    wins = (Wt @ flat).reshape(len(Wt), P, P)
    beta, conv = fit_bradley_terry_batch(wins, l2=L2, start=beta_hat)
    return beta_hat, beta, conv


def timed(fn: Callable[[], object], repeat: int) -> tuple[list[float], list[float], object]:
    """Wall and CPU times of ``repeat`` runs, and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, out


def describe(walls: list[float], cpus: list[float], scale: float = 1.0) -> str:
    w, c = np.array(walls) * scale, np.array(cpus) * scale
    return (
        f"wall min {w.min() * 1e3:.1f} ms, median {np.median(w) * 1e3:.1f} ms; "
        f"CPU median {np.median(c) * 1e3:.1f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--B", type=int, default=1_000)
    ap.add_argument("--scipy-B", type=int, default=200, help="replicates timed in the loop")
    ap.add_argument("--repeat", type=int, default=15, help="runs of the batched fit")
    ap.add_argument("--scipy-repeat", type=int, default=5, help="runs of the SciPy loop")
    ap.add_argument("--full", action="store_true", help="time the SciPy loop on all B")
    ap.add_argument("--blas-threads", default="1", help="BLAS threads (set before import)")
    ap.add_argument(
        "--tiny", action="store_true", help="B = 20, 5 SciPy replicates, 1 run each (the suite)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.B, args.scipy_B, args.repeat, args.scipy_repeat = 20, 5, 1, 1
    load0 = os.getloadavg()[0]
    B = args.B
    a, b, w, c = make_data()
    _, _, tables = win_tables(a, b, w, c)
    flat = tables.reshape(C, P * P)
    total = tables.sum(axis=0)
    Wt = bootstrap_weights(C, B, seed=0)
    n = B if args.full else min(B, args.scipy_B)
    print(f"data: {P} models, {C} conversations x {K} comparisons; B = {B}")
    print(f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']}; cores: {os.cpu_count()}")

    bw, bc, res = timed(lambda: batched(Wt, flat, total), args.repeat)
    beta_hat, beta, conv = res  # type: ignore[misc]
    print(f"batched Newton, all {B} replicates (incl. W* product and point estimate):")
    print(f"  {describe(bw, bc)}; converged {int(conv.sum())}/{B}; runs {args.repeat}")

    print(f"SciPy configurations, {n} replicates each, started from the point estimate")
    print("(median time per refit, largest difference to the batch, median speed-up):")
    chosen, chosen_med = -1, float("inf")
    results: dict[int, tuple[list[float], list[float], float]] = {}
    for k, (label, *_rest) in enumerate(SCIPY_CONFIGS):
        sw, sc, ref = timed(lambda k=k: scipy_loop(Wt, flat, beta_hat, n, k), args.scipy_repeat)
        diff = float(np.max(np.abs(np.asarray(ref) - beta[:n])))
        results[k] = (sw, sc, diff)
        per = float(np.median(sw)) / n
        ok = diff <= AGREE
        ratio = per * B / float(np.median(bw))
        print(
            f"  {label:34s} {per * 1e3:6.3f} ms/refit  max|diff| {diff:.1e}"
            f"  {ratio:4.0f}x{'' if ok else '  (not within 1e-6: not a baseline)'}"
        )
        if ok and per < chosen_med:
            chosen, chosen_med = k, per
    if chosen < 0:
        print("no SciPy configuration agreed within 1e-6: no baseline")
        return
    sw, sc, diff = results[chosen]
    print(f"baseline: {SCIPY_CONFIGS[chosen][0]} (fastest within {AGREE:.0e} of the batch)")
    scale = B / n
    print(
        f"  per-replicate SciPy loop scaled to B = {B}: {describe(sw, sc, scale)}"
        + ("" if n == B else f" (timed on {n}, x{scale:g})")
    )
    print(f"  max |batched - scipy| strength difference: {diff:.2e}")
    med = float(np.median(sw)) * scale / float(np.median(bw))
    best = min(sw) * scale / min(bw)
    cpu = float(np.median(sc)) * scale / float(np.median(bc))
    print(
        f"speed-up (target >= 50x): median/median {med:.0f}x; min/min {best:.0f}x; CPU {cpu:.0f}x"
    )
    print(f"load average (1 min): {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end")


if __name__ == "__main__":
    main()
