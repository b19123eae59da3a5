"""The seeded simulation of corrected pass rates (shared by ``test_binary_coverage.py`` and
``benchmarks/sim_corrected_rates.py``).

A run of ``c_lab + c_unl`` conversations; people label every item of the first ``c_lab``
(``n_lab`` items, at least one per conversation, the rest spread at random), the others hold
``m_unl`` items each. Conversation c passes items with probability ``π_c ~ Beta`` of mean
``theta`` and intraclass correlation ``icc`` (the within-conversation correlation of the true
verdicts); the judge passes a true pass with probability ``tpr`` and fails a true fail with
probability ``tnr``. The truth every interval should cover is ``theta`` (the mean of the Beta),
known without simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attune_judge.calibration import corrected_pass_rates


@dataclass(frozen=True)
class Cell:
    n_lab: int
    c_lab: int
    tpr: float
    tnr: float
    theta: float = 0.7
    icc: float = 0.2
    c_unl: int = 100
    m_unl: int = 5

    @property
    def youden(self) -> float:
        return self.tpr + self.tnr - 1


def simulate(
    rng: np.random.Generator, cell: Cell
) -> tuple[list[str], list[int], list[int], list[float | None]]:
    """One data set: models, clusters, judge verdicts, human labels (``None``: unlabelled)."""
    sizes_lab = rng.multinomial(cell.n_lab - cell.c_lab, [1 / cell.c_lab] * cell.c_lab) + 1
    sizes = np.concatenate([sizes_lab, np.full(cell.c_unl, cell.m_unl)])
    k = 1 / cell.icc - 1
    pi = rng.beta(cell.theta * k, (1 - cell.theta) * k, len(sizes))
    conv = np.repeat(np.arange(len(sizes)), sizes)
    truth = rng.random(len(conv)) < pi[conv]
    u = rng.random(len(conv))
    judge = np.where(truth, u < cell.tpr, u >= cell.tnr).astype(int)
    labelled = conv < cell.c_lab
    human: list[float | None] = [
        float(t) if lab else None for t, lab in zip(truth, labelled, strict=True)
    ]
    return ["m"] * len(conv), conv.tolist(), judge.tolist(), human


def coverage(
    cell: Cell,
    n_sims: int,
    seed: int,
    B: int = 500,
    method: str = "studentized",
    ppi: bool = True,
) -> dict[str, float]:
    """Coverage and mean width of the corrected rate and of PPI++ over ``n_sims`` data sets."""
    rng = np.random.default_rng(seed)
    hit = {"rg": 0, "ppi": 0}
    warned = 0
    width = {"rg": 0.0, "ppi": 0.0}
    defined = {"rg": 0, "ppi": 0}
    for s in range(n_sims):
        res = corrected_pass_rates(*simulate(rng, cell), B=B, seed=s, method=method, ppi=ppi)  # type: ignore[arg-type]
        row = res.rows[0]
        warned += any(w.code in ("weak_judge", "not_identified") for w in res.warnings)
        for key, lo, hi in (
            ("rg", row.corrected.lower, row.corrected.upper),
            ("ppi", row.ppi.lower if row.ppi else None, row.ppi.upper if row.ppi else None),
        ):
            if lo is None or hi is None:
                continue  # no interval: counted as a miss
            defined[key] += 1
            hit[key] += lo <= cell.theta <= hi
            width[key] += hi - lo
    return {
        "rg_coverage": hit["rg"] / n_sims,
        "ppi_coverage": hit["ppi"] / n_sims,
        "rg_width": width["rg"] / max(defined["rg"], 1),
        "ppi_width": width["ppi"] / max(defined["ppi"], 1),
        "rg_defined": defined["rg"] / n_sims,
        "warned": warned / n_sims,
    }


GRID = [
    Cell(n, c, tpr, tnr)
    for n, c in ((50, 10), (100, 20), (200, 40))
    for tpr, tnr in ((0.7, 0.7), (0.8, 0.8), (0.9, 0.9), (0.95, 0.95), (0.95, 0.7), (0.7, 0.95))
]
"""The cells of the full table (``benchmarks/sim_corrected_rates.py``)."""
