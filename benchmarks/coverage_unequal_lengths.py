"""Coverage of pass/fail intervals with unequal conversation lengths (issue 42), full precision.

Turns per conversation 1 + Geometric(1/8) (mean 8), at most 40; in conversation c model j
passes a turn with probability ``expit(a_j + u_c + v_cj)``, ``u_c ~ N(0, 1)``,
``v_cj ~ N(0, 0.5²)``. Two families of four models: pass logits 0, 0.5, 1, 1.5 (pass rates
0.50–0.76) and 2.6, 3.0, 3.4, 3.7 (0.90–0.96); the truth ``E[expit(a + √1.25·Z)]`` by
Gauss–Hermite quadrature. Each cell: ``--sims`` data sets; the coverage of the four means and of
four differences (pairs 0–1, 1–2, 2–3, 0–3) is pooled, with its Monte-Carlo standard error.

    python benchmarks/coverage_unequal_lengths.py [--sims 2000]

The in-suite check (300 data sets, the first family) is
``tests/calibration/test_coverage.py::test_pass_fail_intervals_cover_with_unequal_conversation_lengths``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attune_judge.calibration import (
    ClusterSums,
    bootstrap_weights,
    difference_intervals,
    paired_cluster_bootstrap,
)

FAMILIES = {
    "pass rates 0.50-0.76": (0.0, 0.5, 1.0, 1.5),
    "pass rates 0.90-0.96": (2.6, 3.0, 3.4, 3.7),
}
PAIRS = [(0, 1), (1, 2), (2, 3), (0, 3)]


def pass_rate(a: float, sd: float = float(np.sqrt(1.25))) -> float:
    x, w = np.polynomial.hermite_e.hermegauss(80)
    return float(np.sum(w / (1 + np.exp(-(a + sd * x)))) / np.sum(w))


def data(rng: np.random.Generator, C: int, logits: tuple[float, ...]) -> ClusterSums:
    m = np.minimum(rng.geometric(1 / 8, C), 40)
    M = len(logits)
    lg = np.asarray(logits)[None, :] + rng.normal(0, 1, (C, 1))
    p = 1 / (1 + np.exp(-(lg + rng.normal(0, 0.5, (C, M)))))
    N = np.repeat(m[:, None], M, axis=1)
    S = rng.binomial(N, p).astype(float)
    return ClusterSums([f"c{c:03d}" for c in range(C)], [f"m{j}" for j in range(M)], S, N * 1.0)


def coverage(logits: tuple[float, ...], C: int, sims: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    truth = np.array([pass_rate(a) for a in logits])
    mh = dh = 0.0
    for s in range(sims):
        sums = data(rng, C, logits)
        W = bootstrap_weights(C, 50, seed=s)  # Wilson and MOVER use no replicates
        res = paired_cluster_bootstrap(sums, weights=W, bounds=(0.0, 1.0))
        mh += np.mean([m.lower <= t <= m.upper for m, t in zip(res.means, truth, strict=True)])  # type: ignore[operator]
        ds = difference_intervals(sums, PAIRS, weights=W, bounds=(0.0, 1.0))
        dh += np.mean(
            [d.lower <= truth[j] - truth[k] <= d.upper for d, (j, k) in zip(ds, PAIRS, strict=True)]  # type: ignore[operator]
        )
    return mh / sims, dh / sims


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--tiny", action="store_true", help="5 data sets per cell (the suite)")
    args = ap.parse_args()
    if args.tiny:
        args.sims = 5
    for name, logits in FAMILIES.items():
        for C in (10, 15, 60):
            t0 = time.perf_counter()
            m, d = coverage(logits, C, args.sims, seed=7000 + C)
            se = np.sqrt(0.95 * 0.05 / args.sims)  # per interval, a lower bound when pooled
            print(
                f"{name}, C={C}: means {m:.3f}, differences {d:.3f} "
                f"(± ≥{se:.3f}; {time.perf_counter() - t0:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
