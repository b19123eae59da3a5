"""Bradley–Terry bootstrap: all replicates refitted at once vs a per-replicate SciPy refit.

11 models, 200 conversations × 10 comparisons, B = 1,000 (target >= 50x).

    python benchmarks/bench_bradley_terry.py [--B 1000] [--scipy-B 200] [--full]

The SciPy loop refits each replicate with ``scipy.optimize.minimize`` (L-BFGS-B with the
analytic gradient) on the same re-weighted win matrices; by default it is timed on
``--scipy-B`` replicates and scaled to B (``--full`` times all of them). The largest difference
between the two fits is printed as a correctness check.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import optimize

from attune_judge.calibration import bootstrap_weights, fit_bradley_terry_batch, win_tables

P, C, K = 11, 200, 10
L2 = 0.01


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


def scipy_fit(W: np.ndarray) -> np.ndarray:
    def f(beta: np.ndarray) -> tuple[float, np.ndarray]:
        d = beta[:, None] - beta[None, :]
        nll = np.sum(W * np.logaddexp(0, -d)) + L2 / 2 * beta @ beta
        s = 1 / (1 + np.exp(d))  # P(j beats i)
        g = -np.sum(W * s, axis=1) + np.sum(W.T * s.T, axis=1) + L2 * beta
        return float(nll), g

    res = optimize.minimize(
        f, np.zeros(len(W)), jac=True, method="L-BFGS-B", options={"gtol": 1e-9, "ftol": 1e-14}
    )
    return np.asarray(res.x - res.x.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--B", type=int, default=1_000)
    ap.add_argument("--scipy-B", type=int, default=200)
    ap.add_argument("--full", action="store_true", help="time the SciPy loop on all B")
    args = ap.parse_args()
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    B = args.B
    a, b, w, c = make_data()
    _, _, tables = win_tables(a, b, w, c)
    flat = tables.reshape(C, P * P)
    Wt = bootstrap_weights(C, B, seed=0)
    print(f"data: {P} models, {C} conversations x {K} comparisons; B = {B}")

    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        beta, conv = fit_bradley_terry_batch((Wt @ flat).reshape(B, P, P), l2=L2)
        best = min(best, time.perf_counter() - t0)
    n_scipy = B if args.full else min(B, args.scipy_B)
    t0 = time.perf_counter()
    ref = np.array([scipy_fit((Wt[k] @ flat).reshape(P, P)) for k in range(n_scipy)])
    t_scipy = time.perf_counter() - t0
    t_scipy_B = t_scipy * B / n_scipy
    diff = float(np.max(np.abs(ref - beta[:n_scipy])))
    print(f"batched Newton, all {B} replicates: {best:.3f} s (converged: {int(conv.sum())}/{B})")
    print(
        f"per-replicate SciPy refit: {t_scipy:.2f} s for {n_scipy} replicates"
        + ("" if n_scipy == B else f" -> {t_scipy_B:.1f} s extrapolated to B = {B}")
    )
    print(f"speed-up: {t_scipy_B / best:.0f}x (target >= 50x)")
    print(f"max |batched - scipy| strength difference: {diff:.2e}")


if __name__ == "__main__":
    main()
