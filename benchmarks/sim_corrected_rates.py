"""Coverage and width of corrected pass rates (Rogan–Gladen, PPI++) in seeded simulations.

Run: ``.venv/bin/python benchmarks/sim_corrected_rates.py [N_SIMS] [B] [--tiny]`` (defaults 1000
data sets per cell and B = 1000; about half an hour; 300 and 500 took 312 s). The data generator
is ``tests/calibration/_binary_sim.py`` (conversations with correlated true verdicts, a judge
with fixed TPR and TNR; people label every item of 10–40 conversations). Prints a Markdown
table: per cell, the coverage of the 95% Rogan–Gladen interval (bootstrap-t, and percentile for
comparison) and of PPI++, their mean widths, and the share of data sets with the ``weak_judge``
/ ``not_identified`` warnings. The suite's reduced check is
``tests/calibration/test_binary_coverage.py``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.calibration._binary_sim import GRID, coverage


def main() -> None:
    tiny = "--tiny" in sys.argv  # the suite: 3 data sets per cell, B = 50, two cells
    argv = [a for a in sys.argv[1:] if a != "--tiny"]
    n_sims = 3 if tiny else int(argv[0]) if argv else 1000
    B = 50 if tiny else int(argv[1]) if len(argv) > 1 else 1000
    grid = GRID[:2] if tiny else GRID
    print(
        f"{n_sims} data sets per cell, B = {B}; truth θ = 0.7, ICC 0.2, 100 unlabelled "
        "conversations of 5 items\n"
    )
    print(
        "| labelled n / conversations | TPR | TNR | J | RG bootstrap-t | RG percentile | "
        "PPI++ | width RG-t | width PPI++ | warned |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    t0 = time.perf_counter()
    for i, cell in enumerate(grid):
        r = coverage(cell, n_sims, seed=1000 + i, B=B)
        rp = coverage(cell, n_sims, seed=1000 + i, B=B, method="percentile")
        print(
            f"| {cell.n_lab} / {cell.c_lab} | {cell.tpr:.2f} | {cell.tnr:.2f} | "
            f"{cell.youden:.2f} | {r['rg_coverage']:.1%} | {rp['rg_coverage']:.1%} | "
            f"{r['ppi_coverage']:.1%} | {r['rg_width']:.3f} | {r['ppi_width']:.3f} | "
            f"{r['warned']:.0%} |",
            flush=True,
        )
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
