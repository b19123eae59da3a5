"""Coverage of the corrected pass rate's 95% interval in seeded simulations (data generator:
``_binary_sim.py``; the full table, with PPI++ and percentile intervals beside, is
``benchmarks/sim_corrected_rates.py`` → ``benchmarks/README.md``).

The suite's check: four cells with ``J = TPR + TNR − 1 ≥ 0.4`` and 50–200 labelled items in
10–40 conversations (within-conversation correlation 0.2), 250 data sets each with B = 300
and a run of 40 unlabelled conversations (the interval's width depends little on them): the
pooled coverage must lie in 93–97% (±2.9 standard errors of a 1,000-set proportion at 95%) and
every cell's must be ≥ 91% (−2.9 SE of a 250-set one). Percentile intervals on the same
design cover 82–94% at 10–20 conversations (benchmark table), so the check can fail. About ten
seconds. ``ATTUNE_FULL_COVERAGE=1`` runs the full grid of the benchmark at 400 data sets per
cell (each cell 93–97%; minutes).
"""

from __future__ import annotations

import os

import pytest

from tests.calibration._binary_sim import GRID, Cell, coverage

CELLS = [
    Cell(50, 10, 0.8, 0.8, c_unl=40),
    Cell(50, 10, 0.95, 0.95, c_unl=40),
    Cell(100, 20, 0.7, 0.7, c_unl=40),
    Cell(200, 40, 0.95, 0.7, c_unl=40),
]


def test_corrected_rate_interval_covers_95_percent() -> None:
    n_sims = 250
    results = [
        coverage(cell, n_sims, seed=500 + i, B=300, ppi=False) for i, cell in enumerate(CELLS)
    ]
    covs = [r["rg_coverage"] for r in results]
    print("coverage per cell:", [f"{c:.1%}" for c in covs])
    pooled = sum(covs) / len(covs)
    assert 0.93 <= pooled <= 0.97, (pooled, covs)
    assert min(covs) >= 0.91, covs


@pytest.mark.skipif(
    not os.environ.get("ATTUNE_FULL_COVERAGE"), reason="full grid: set ATTUNE_FULL_COVERAGE=1"
)
@pytest.mark.parametrize("cell", [c for c in GRID if c.youden >= 0.4], ids=str)
def test_full_grid_each_cell(cell: Cell) -> None:
    r = coverage(cell, 400, seed=7, B=500, ppi=False)
    assert 0.93 <= r["rg_coverage"] <= 0.97, r
