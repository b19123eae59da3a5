"""Leaderboards with many models: peak memory and time of ``leaderboard`` (rank sets included).

Each configuration runs in its own process so its peak resident memory (``ru_maxrss``) is its
own. Models × 100 conversations × 5 turns, B = 10,000 (the defaults of ``rank``).

    python benchmarks/bench_leaderboard_memory.py [--models 50 100 200] [--B 10000]

Printed per size: wall time, peak RSS, the rank-set work (bootstrap draws used for the critical
values), and, as the baseline measured in the same run, the peak RSS of the former one-block
critical value (all draws × all ordered pairs in one array, 10,000 draws) for the same size
(skipped above ``--baseline-max`` models: 200 models would need ~3.2 GB). Target (issue 17):
200 models in ≤ 500 MB with time O(models²).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

C, T = 100, 5


def _data(M: int) -> tuple[list[str], list[int], list[float]]:
    import numpy as np

    rng = np.random.default_rng(0)
    conv = np.repeat(np.arange(C), M * T)
    model = np.tile(np.repeat(np.arange(M), T), C)
    score = 0.002 * model + rng.normal(0, 0.5, C)[conv] + rng.normal(0, 1, len(conv))
    return [f"m{m:03d}" for m in model], conv.tolist(), score.tolist()


def _child(kind: str, M: int, B: int) -> None:
    import numpy as np

    models, clusters, scores = _data(M)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    extra: dict[str, object] = {}
    if kind == "leaderboard":
        from attune_judge.calibration import leaderboard

        lb = leaderboard(models, clusters, scores, B=B)
        extra = {
            "crit_draws": lb.rank_sets_simultaneous.n_draws,
            "steps": len(lb.rank_sets_simultaneous.critical_values[0]),
            "tiers": len(lb.tiers),
        }
    else:  # the former one-block maximum: Z[:, J] - Z[:, K] over all ordered pairs at once
        from attune_judge.calibration import ClusterSums, cluster_robust_covariance

        cov = cluster_robust_covariance(ClusterSums.from_long(models, clusters, scores))
        Z = np.random.default_rng(0).multivariate_normal(np.zeros(M), cov, size=10_000)
        J, K = np.where(~np.eye(M, dtype=bool))
        d = np.sqrt(np.diag(cov)[J] + np.diag(cov)[K] - 2 * cov[J, K])
        float(np.quantile(np.max((Z[:, J] - Z[:, K]) / d, axis=1), 0.95))
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"wall": wall, "peak_mb": peak / 1024, "data_mb": base / 1024, **extra}))


def _run(kind: str, M: int, B: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(M), str(B)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--baseline-max", type=int, default=100)
    ap.add_argument("--child", nargs=3)
    ap.add_argument(
        "--tiny", action="store_true", help="4 models, B = 200, the baseline too (the suite)"
    )
    a = ap.parse_args()
    if a.tiny:
        a.models, a.B, a.baseline_max = [4], 200, 4
    if a.child:
        _child(a.child[0], int(a.child[1]), int(a.child[2]))
        return
    first = None
    for M in a.models:
        r = _run("leaderboard", M, a.B)
        line = (
            f"{M:4d} models: leaderboard {r['wall']:6.1f} s, peak RSS {r['peak_mb']:6.0f} MB "
            f"(after building the data {r['data_mb']:.0f} MB); {r['crit_draws']} bootstrap "
            f"draws for critical values, {r['steps']} step(s), {r['tiers']} tier(s)"
        )
        if first is None:
            first = (M, r["wall"])
        else:
            line += f"; time ×{r['wall'] / first[1]:.1f} for models² ×{(M / first[0]) ** 2:.1f}"
        if M <= a.baseline_max:
            b = _run("one_block", M, a.B)
            line += f"; baseline one-block critical value: peak RSS {b['peak_mb']:.0f} MB"
        print(line, flush=True)


if __name__ == "__main__":
    main()
