"""Paired cluster bootstrap: vectorised engine vs per-replicate loops, same data, same run.

11 models × 200 conversations × 10 turns, B = 10,000 (STATISTICS.md: target < 0.1 s and >= 20x
faster than a per-replicate Python/pandas loop).

    python benchmarks/bench_bootstrap.py [--B 10000] [--naive-B 200]

Printed: wall times (best of 3), the speed-up, and the largest difference between the
vectorised and loop replicates (they use the same weights, so they must agree to rounding).

End to end with BCa (issue 28): ``paired_cluster_bootstrap(method="bca")`` against a lean numpy
loop that makes the same draws (per replicate: C cluster indices from the same generator,
counted with ``bincount``, two dot products), the jackknife by leaving each cluster out, and the
same BCa endpoints; the two are run alternately ``--repeat`` times, the speed-up is
median / median, and both must give the same endpoints.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from attune_judge.calibration import (
    ClusterSums,
    bootstrap_weights,
    interval_endpoints,
    paired_cluster_bootstrap,
    ratio_replicates,
)

M, C, T = 11, 200, 10


def make_data(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    conv = np.repeat(np.arange(C), M * T)
    model = np.tile(np.repeat(np.arange(M), T), C)
    u = rng.normal(scale=np.sqrt(0.3), size=C)[conv]
    score = 0.02 * model + u + rng.normal(scale=np.sqrt(0.7), size=len(conv))
    return pd.DataFrame({"model": [f"m{m:02d}" for m in model], "conv": conv, "score": score})


CPU: dict[str, float] = {}


def best_of(fn: Callable[[], object], repeat: int = 3, name: str = "") -> tuple[float, object]:
    """Best wall time of ``repeat`` runs (CPU time of that run kept in ``CPU[name]``)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t0
        if wall < best:
            best, CPU[name] = wall, time.process_time() - c0
    return best, out


def lean_loop_bca(sums: ClusterSums, B: int, seed: int) -> list[tuple[float, float]]:
    """BCa endpoints per label by a lean numpy loop (the same draws as the engine)."""
    S, N = sums.sums, sums.counts
    C = len(sums.clusters)
    rng = np.random.default_rng(seed)
    reps = np.empty((B, S.shape[1]))
    for b in range(B):
        w = np.bincount(rng.integers(0, C, C, dtype=np.int32), minlength=C)
        reps[b] = (w @ S) / (w @ N)
    theta = S.sum(0) / N.sum(0)
    jack = np.empty((C, S.shape[1]))
    for c in range(C):
        keep = np.arange(C) != c
        jack[c] = S[keep].sum(0) / N[keep].sum(0)
    out = []
    for m in range(S.shape[1]):
        ends = interval_endpoints(float(theta[m]), reps[:, m], method="bca", jackknife=jack[:, m])
        out.append((float(ends.lower or np.nan), float(ends.upper or np.nan)))
    return out


def end_to_end_bca(sums: ClusterSums, B: int, repeat: int) -> None:
    """The engine with BCa against the lean loop, alternately, same seed; median / median."""
    engine_t, loop_t = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = paired_cluster_bootstrap(sums, B=B, seed=0, method="bca")
        engine_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ends = lean_loop_bca(sums, B, 0)
        loop_t.append(time.perf_counter() - t0)
    engine = [(m.lower, m.upper) for m in res.means]
    diff = max(abs(a - c) + abs(b - d) for (a, b), (c, d) in zip(engine, ends, strict=True))
    e, lp = float(np.median(engine_t)), float(np.median(loop_t))
    print(
        f"end to end with BCa, B = {B}: engine {e * 1000:.1f} ms (min {min(engine_t) * 1000:.1f}),"
        f" lean numpy loop {lp * 1000:.0f} ms (min {min(loop_t) * 1000:.0f}), medians of "
        f"{repeat} alternating runs: speed-up {lp / e:.1f}x (target >= 15x); "
        f"max |endpoint difference| {diff:.1e}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--naive-B", type=int, default=200, help="replicates for the naive loop")
    ap.add_argument("--repeat", type=int, default=7, help="alternating runs, end to end BCa")
    ap.add_argument("--only-bca", action="store_true", help="only the end-to-end BCa figure")
    ap.add_argument(
        "--tiny", action="store_true", help="B = 200, 20 naive replicates, 1 BCa run (the suite)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.B, args.naive_B, args.repeat = 200, 20, 1
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    B = args.B
    df = make_data()
    print(f"data: {M} models x {C} conversations x {T} turns = {len(df)} scores; B = {B}")
    sums0 = ClusterSums.from_long(df["model"], df["conv"], df["score"].to_numpy())
    end_to_end_bca(sums0, B, args.repeat)
    if args.only_bca:
        print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f}")
        return

    t_sums, sums = best_of(
        lambda: ClusterSums.from_long(df["model"], df["conv"], df["score"].to_numpy()), 5
    )
    assert isinstance(sums, ClusterSums)

    def vectorised() -> np.ndarray:
        W = bootstrap_weights(len(sums.clusters), B, seed=0)
        return ratio_replicates(sums, W)

    t_vec, reps = best_of(vectorised, 5, "vec")
    t_full, _ = best_of(lambda: paired_cluster_bootstrap(sums, B=B, seed=0), 5)

    # per-replicate loop over the same weights, pandas per-cluster sums precomputed (a fair,
    # already-optimised loop: only the replicate loop differs from the vectorised engine)
    W = bootstrap_weights(C, B, seed=0)
    dfs = df.assign(conv=df["conv"].astype(str))  # same cluster order as ClusterSums
    S = dfs.pivot_table(index="conv", columns="model", values="score", aggfunc="sum")
    N = dfs.pivot_table(index="conv", columns="model", values="score", aggfunc="count")
    S, N = S.loc[sums.clusters, sums.labels], N.loc[sums.clusters, sums.labels]

    def loop() -> np.ndarray:
        out = np.empty((B, M))
        for b in range(B):
            w = pd.Series(W[b], index=S.index)
            out[b] = (S.mul(w, axis=0).sum() / N.mul(w, axis=0).sum()).to_numpy()
        return out

    t_loop, loop_reps = best_of(loop, repeat=1)
    diff = float(np.max(np.abs(np.asarray(loop_reps) - np.asarray(reps))))

    # naive loop: resample conversations, concatenate their rows, group by model (timed on
    # fewer replicates and scaled to B; stated as extrapolated)
    groups = {c: g for c, g in df.groupby("conv")}
    rng = np.random.default_rng(0)

    def naive() -> None:
        for _ in range(args.naive_B):
            pick = rng.integers(0, C, C)
            pd.concat([groups[c] for c in pick]).groupby("model")["score"].mean()

    t_naive, _ = best_of(naive, repeat=1)
    t_naive_B = t_naive * B / args.naive_B

    print(f"per-cluster sums, once per data set (22,000 rows): {t_sums:.4f} s")
    print(
        f"vectorised replicates (weights + (BxC)@(CxM)): {t_vec:.4f} s wall, "
        f"{CPU['vec']:.4f} s CPU (best of 5)"
    )
    print(f"full paired_cluster_bootstrap (+ BCa, MC error, covariances): {t_full:.4f} s")
    print(f"per-replicate pandas loop on per-cluster sums:         {t_loop:.3f} s")
    print(
        f"naive resample-rows + groupby loop: {t_naive:.3f} s for {args.naive_B} replicates "
        f"-> {t_naive_B:.1f} s extrapolated to B = {B}"
    )
    print(
        f"speed-up vs pandas loop: {t_loop / t_vec:.0f}x (target >= 20x); "
        f"vs naive loop: {t_naive_B / t_vec:.0f}x (extrapolated)"
    )
    print(
        f"target < 0.1 s: {'met' if t_vec < 0.1 else 'NOT met'} ({t_vec:.4f} s; "
        f"with the sums {t_vec + t_sums:.4f} s)"
    )
    print(f"max |vectorised - loop| over all replicates: {diff:.2e}")


if __name__ == "__main__":
    main()
