"""Style-controlled Bradley–Terry on seeded simulations at full precision (issue 43).

Five models, all pairs in each of 30 conversations; the better models write shorter replies
and the judge rewards length (8 logits per unit of the normalised length difference), so the
raw ranking is reversed; ties with probability 0.4·min(π, 1 − π) (E[y] = π). Prints the mean
Kendall τ of the controlled and the raw strengths with the true ones, and the coverage of the
95% intervals of the controlled strengths. The suite's
``tests/calibration/test_style_control.py`` runs 40 of these at B = 100.

    .venv/bin/python benchmarks/bench_style_control.py [-n 300] [-B 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import kendalltau

from attune_judge.calibration import style_bradley_terry


def simulate(rng: np.random.Generator, p: int = 5, C: int = 30) -> tuple[list, np.ndarray]:
    beta = np.linspace(1, -1, p)
    mean_len = np.linspace(300, 900, p)
    rows = []
    for conv in range(C):
        for i in range(p):
            for j in range(i + 1, p):
                li = rng.lognormal(np.log(mean_len[i]), 0.3)
                lj = rng.lognormal(np.log(mean_len[j]), 0.3)
                pr = 1 / (1 + np.exp(-(beta[i] - beta[j] + 8 * (li - lj) / (li + lj))))
                tie, u = 0.4 * min(pr, 1 - pr), rng.random()
                y = 1.0 if u < pr - tie / 2 else (0.5 if u < pr + tie / 2 else 0.0)
                rows.append((f"m{i}", f"m{j}", y, f"c{conv}", [li], [lj]))
    return rows, beta - beta.mean()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("-B", type=int, default=200)
    ap.add_argument("--conversations", type=int, default=30)
    ap.add_argument("--tiny", action="store_true", help="2 simulations, B = 20 (the suite)")
    args = ap.parse_args()
    if args.tiny:
        args.n, args.B = 2, 20
    rng = np.random.default_rng(7)
    taus, raw_taus, cover = [], [], []
    t0 = time.perf_counter()
    for r in range(args.n):
        rows, truth = simulate(rng, C=args.conversations)
        a, b, y, c, sa, sb = (list(x) for x in zip(*rows, strict=True))
        res = style_bradley_terry(a, b, y, c, sa, sb, B=args.B, seed=r)
        t = truth[[int(m[1:]) for m in res.labels]]
        taus.append(kendalltau([m.estimate for m in res.strengths], t).statistic)
        raw_taus.append(kendalltau([m.estimate for m in res.raw.strengths], t).statistic)
        cover += [m.lower <= v <= m.upper for m, v in zip(res.strengths, t, strict=True)]
    k = len(cover)
    cov = float(np.mean(cover))
    print(
        f"{args.n} simulations, {args.conversations} conversations, B={args.B}, "
        f"{time.perf_counter() - t0:.0f} s: controlled τ {np.mean(taus):.3f}, raw τ "
        f"{np.mean(raw_taus):.3f}, coverage {cov:.3f} ± {np.sqrt(cov * (1 - cov) / k):.3f} "
        f"({k} intervals)"
    )


if __name__ == "__main__":
    main()
