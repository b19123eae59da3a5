"""Length-controlled win rates against AlpacaEval 2's published ones (issue 43).

Reads ``benchmarks/data/alpaca_eval2_pairs.csv.gz`` and ``alpaca_eval2_published.csv``
(derived by ``extract_alpaca_eval.py`` from the public AlpacaEval repository, Apache-2.0:
the GPT-4-turbo judge's preferences of each model over gpt4_1106_preview, and the published
``length_controlled_winrate``), fits :func:`attune_judge.calibration.length_controlled_winrates`
on all models at once, and prints the Spearman correlation and the mean absolute difference
with the published values, with and without the regularisation, and the models furthest off.

    .venv/bin/python benchmarks/bench_length_control.py [-B 200]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau, spearmanr

from attune_judge.calibration import length_controlled_winrates

DATA = Path(__file__).parent / "data"


def load() -> tuple[dict[str, list[object]], dict[str, tuple[float, float]]]:
    cols: dict[str, list[object]] = {
        k: [] for k in ("model", "instruction", "len_model", "len_baseline", "preference")
    }
    with gzip.open(DATA / "alpaca_eval2_pairs.csv.gz", "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            for k in cols:
                cols[k].append(row[k])
    with open(DATA / "alpaca_eval2_published.csv", newline="") as fh:
        pub = {
            r["model"]: (float(r["length_controlled_winrate"]), float(r["win_rate"]))
            for r in csv.DictReader(fh)
        }
    return cols, pub


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-B", type=int, default=200)
    ap.add_argument("--tiny", action="store_true", help="B = 10, 4 models (the suite)")
    args = ap.parse_args()
    if args.tiny:
        args.B = 10
    cols, pub = load()
    if args.tiny:  # the baseline and the first 3 other models
        keep = {"gpt4_1106_preview", *sorted({str(m) for m in cols["model"]})[:3]}
        rows = [k for k, m in enumerate(cols["model"]) if m in keep]
        cols = {key: [v[k] for k in rows] for key, v in cols.items()}
    for reg in (0.2, 0.0):
        t0 = time.perf_counter()
        res = length_controlled_winrates(
            [str(m) for m in cols["model"]],
            cols["instruction"],
            [float(v) for v in cols["len_model"]],  # type: ignore[arg-type]
            [float(v) for v in cols["len_baseline"]],  # type: ignore[arg-type]
            [float(v) for v in cols["preference"]],  # type: ignore[arg-type]
            baseline="gpt4_1106_preview",
            B=args.B,
            regularisation=reg,
        )
        secs = time.perf_counter() - t0
        ours = np.array([m.estimate for m in res.controlled], dtype=float)
        theirs = np.array([pub[name][0] for name in res.labels])
        raw = np.array([m.estimate for m in res.raw], dtype=float)
        raw_pub = np.array([pub[name][1] for name in res.labels])
        diff = np.abs(ours - theirs)
        print(
            f"regularisation {reg}: {len(res.labels)} models, B={args.B}, {secs:.1f} s: "
            f"Spearman {spearmanr(ours, theirs).statistic:.4f}, Kendall "
            f"{kendalltau(ours, theirs).statistic:.4f}, mean |diff| {diff.mean():.2f} points, "
            f"max {diff.max():.2f} ({res.labels[int(diff.argmax())]}); raw win rates: "
            f"mean |diff| {np.abs(raw - raw_pub).mean():.2f}"
        )
        for i in np.argsort(-diff)[:5]:
            m = res.controlled[i]
            print(
                f"  {res.labels[i]:40s} ours {ours[i]:6.2f} [{m.lower:.1f}, {m.upper:.1f}] "
                f"published {theirs[i]:6.2f}"
            )
        variants = [
            i
            for i, name in enumerate(res.labels)
            if name.endswith(("_concise", "_verbose")) or name in ("NullModel", "gpt4_gamed")
        ]
        for i in variants:
            print(
                f"  variant {res.labels[i]:32s} ours {ours[i]:6.2f} "
                f"published {theirs[i]:6.2f} raw {raw[i]:6.2f}"
            )


if __name__ == "__main__":
    main()
