"""Inter-expert agreement on the empathic-communication data (the human ceiling).

Quadratic-weighted Cohen's kappa the way scikit-learn computes it: the categories are the
values observed in either rater's column, and the weights use the distance between their
*positions* in that sorted list. Computed here with numpy and checked against statsmodels'
independent implementation; Spearman's rho from scipy.

Run ``python -m tests.adapters.test_expert_agreement`` to print the table as Markdown.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import spearmanr
from statsmodels.stats.inter_rater import cohens_kappa

from attune_judge.data.adapters import convert_empathic_communication
from tests.conftest import DATASETS

SRC = DATASETS / "empathic-communication"
EXPERTS = ("expert1", "expert2", "expert3")


def quadratic_kappa(a: list[float], b: list[float]) -> float:
    """sklearn-style quadratic-weighted kappa on the observed categories."""
    labels = sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(labels)}
    k = len(labels)
    table = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    expected = np.outer(table.sum(1), table.sum(0)) / table.sum()
    i, j = np.indices((k, k))
    w = (i - j) ** 2
    return float(1 - (w * table).sum() / (w * expected).sum())


def _statsmodels_kappa(a: list[float], b: list[float]) -> float:
    labels = sorted(set(a) | set(b))
    index = {v: i for i, v in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b, strict=True):
        table[index[x], index[y]] += 1
    return float(cohens_kappa(table, wt="quadratic").kappa)


def expert_agreement_table() -> list[tuple[str, str, str, str, int, float, float]]:
    """(source, dimension, rater a, rater b, n, kappa_qw, spearman) for every expert pair."""
    result = convert_empathic_communication(SRC)
    values = {(r.item_id, r.rater, r.dimension): r.value for r in result.ratings}
    rows = []
    # the sources and their dimensions as the ratings carry them (first-seen order)
    dimensions: dict[str, dict[str, None]] = {}
    for r in result.ratings:
        if r.rater in EXPERTS:
            dimensions.setdefault(r.metadata["source"], {})[r.dimension] = None
    for name, dims in dimensions.items():
        ids = sorted({r.item_id for r in result.ratings if r.metadata["source"] == name})
        for dim in dims:
            for ea, eb in itertools.combinations(EXPERTS, 2):
                a = [values[(i, ea, dim)] for i in ids]
                b = [values[(i, eb, dim)] for i in ids]
                assert all(isinstance(x, float) for x in a + b)
                fa = [float(x) for x in a if x is not None]
                fb = [float(x) for x in b if x is not None]
                rho = float(spearmanr(fa, fb).statistic)
                rows.append((name, dim, ea, eb, len(ids), quadratic_kappa(fa, fb), rho))
    return rows


def test_kappa_hand_example() -> None:
    # a = [1, 2, 3], b = [1, 2, 2]: categories {1,2,3}, one disagreement at distance 1, so
    # sum(w*O) = 1; E_ij = row_i * col_j / 3 with col = (1, 2, 0): sum(w*E) = (1*5 + 2*2) / 3 = 3
    # -> kappa = 1 - 1/3 = 2/3
    assert quadratic_kappa([1, 2, 3], [1, 2, 2]) == pytest.approx(2 / 3)
    # observed categories only: with values {1, 2, 5}, 2 and 5 are adjacent categories, so
    # this equals the example with values {1, 2, 3} (value-based weights would differ)
    assert quadratic_kappa([1, 2, 5], [1, 5, 5]) == pytest.approx(
        quadratic_kappa([1, 2, 3], [1, 3, 3])
    )
    assert quadratic_kappa([1, 2, 5], [1, 5, 5]) != pytest.approx(2 / 3)


def test_expert_table_matches_statsmodels() -> None:
    rows = expert_agreement_table()
    assert len(rows) == 21 * 3
    result = convert_empathic_communication(SRC)
    values = {(r.item_id, r.rater, r.dimension): r.value for r in result.ratings}
    for source, dim, ea, eb, _, kappa, rho in rows:
        ids = sorted({k[0] for k in values if k[0].startswith(source + ":")})
        a = [float(values[(i, ea, dim)] or 0) for i in ids]
        b = [float(values[(i, eb, dim)] or 0) for i in ids]
        assert kappa == pytest.approx(_statsmodels_kappa(a, b), abs=1e-9)
        assert -1 <= rho <= 1


def test_expert_table_matches_calibration_layer() -> None:
    # a third implementation: attune_judge.calibration.pair_agreement (observed-index spacing)
    from attune_judge.calibration import pair_agreement

    ratings = convert_empathic_communication(SRC).ratings
    values = {(r.item_id, r.rater, r.dimension): r.value for r in ratings}
    for source, dim, ea, eb, _, kappa, rho in expert_agreement_table()[::5]:
        ids = sorted({k[0] for k in values if k[0].startswith(source + ":")})
        a = [float(values[(i, ea, dim)] or 0) for i in ids]
        b = [float(values[(i, eb, dim)] or 0) for i in ids]
        res = pair_agreement(a, b, ids, metrics=["cohen_kappa_quadratic", "spearman"], B=50)
        assert res.metrics["cohen_kappa_quadratic"].estimate == pytest.approx(kappa, abs=1e-9)
        assert res.metrics["spearman"].estimate == pytest.approx(rho, abs=1e-9)


if __name__ == "__main__":  # pragma: no cover
    print("| source | dimension | pair | n | κ (quadratic) | Spearman ρ |")
    print("|---|---|---|---|---|---|")
    for source, dim, ea, eb, n, kappa, rho in expert_agreement_table():
        print(f"| {source} | {dim} | {ea[-1]}–{eb[-1]} | {n} | {kappa:.3f} | {rho:.3f} |")
