"""Published worked examples (tests/fixtures/design/reference-values.json) via the public API."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from attune_judge.calibration import (
    RatingTable,
    fleiss_kappa,
    krippendorff_alpha,
    pair_agreement,
)
from tests.conftest import DESIGN

REF = {v["id"]: v for v in json.loads((DESIGN / "reference-values.json").read_text())["vectors"]}


def _kripp_table() -> RatingTable:
    vec = REF["kripp_2011_4coders_12units_missing"]
    data = vec["data"]  # rows = coders, columns = units
    items = [f"unit{u + 1:02d}" for u in range(len(data[0]))]
    values = [
        [None if data[c][u] is None else float(data[c][u]) for c in range(len(data))]
        for u in range(len(items))
    ]
    return RatingTable(items, ["A", "B", "C", "D"], values, items)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_matches_krippendorff_2011(level: str) -> None:
    vec = REF["kripp_2011_4coders_12units_missing"]
    res = krippendorff_alpha(_kripp_table(), level, B=200)  # type: ignore[arg-type]
    assert res.estimate is not None
    assert res.estimate == pytest.approx(vec["expected"][level], abs=vec["tolerance"])
    # the exact fractions of the worked example, to 1e-12
    assert res.estimate == pytest.approx(float(Fraction(vec["expected_exact"][level])), abs=1e-12)
    assert res.lower is not None and res.upper is not None
    assert res.lower <= res.estimate <= res.upper
    assert "1 with a single rating" in (res.note or "")  # unit 12 is unpairable


def _sas_vectors() -> tuple[list[float], list[float]]:
    table = REF["cohen_sas_3x3"]["table_rows_rater1_cols_rater2"]
    x: list[float] = []
    y: list[float] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            x += [float(i + 1)] * count
            y += [float(j + 1)] * count
    return x, y


def test_cohen_kappa_matches_sas_proc_freq() -> None:
    vec = REF["cohen_sas_3x3"]
    x, y = _sas_vectors()
    res = pair_agreement(
        x,
        y,
        list(range(len(x))),
        scale=[1.0, 2.0, 3.0],
        metrics=["cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"],
        B=200,
    )
    tol = vec["tolerance"]
    exp = vec["expected"]
    assert res.metrics["cohen_kappa"].estimate == pytest.approx(exp["unweighted"]["kappa"], abs=tol)
    assert res.metrics["cohen_kappa_linear"].estimate == pytest.approx(
        exp["linear(Cicchetti-Allison, weights=[0,1,2])"]["kappa"], abs=tol
    )
    assert res.metrics["cohen_kappa_quadratic"].estimate == pytest.approx(
        exp["quadratic"]["kappa"], abs=1e-9
    )


def test_fleiss_kappa_matches_fleiss_1971() -> None:
    vec = REF["fleiss_1971_diagnoses"]
    data = vec["data_subjects_x_raters"]
    items = [f"p{i:02d}" for i in range(len(data))]
    table = RatingTable(
        items, [f"r{j}" for j in range(6)], [[float(v) for v in row] for row in data], items
    )
    res = fleiss_kappa(table, B=200)
    assert res.estimate == pytest.approx(vec["expected"]["fleiss_kappa"], abs=vec["tolerance"])
    assert res.lower is not None and res.upper is not None
    assert res.lower < res.estimate < res.upper


def test_cohen_kappa_rater2_vs_rater3_of_fleiss_data() -> None:
    # irr::kappa2 on raters 2 and 3 of the diagnoses data gives 0.631 (reference-values.json)
    data = REF["fleiss_1971_diagnoses"]["data_subjects_x_raters"]
    x = [float(r[1]) for r in data]
    y = [float(r[2]) for r in data]
    res = pair_agreement(x, y, list(range(30)), metrics=["cohen_kappa"], B=100)
    assert res.metrics["cohen_kappa"].estimate == pytest.approx(0.631, abs=5e-4)


def test_weighted_kappa_spacing_is_explicit() -> None:
    # x = [1, 2, 5], y = [2, 1, 5]; every marginal is 1/3.
    # observed_index positions (0, 1, 2): observed linear disagreement (1+1+0)/3 = 2/3,
    #   expected (1/9)·Σ|i−j| = 8/9  →  κ = 1 − (2/3)/(8/9) = 0.25
    # scale_index over the declared 1..5 scale, positions (0, 1, 4): expected
    #   (1/9)·2·(1+4+3) = 16/9  →  κ = 1 − (2/3)/(16/9) = 0.625
    x, y = [1.0, 2.0, 5.0], [2.0, 1.0, 5.0]
    obs = pair_agreement(x, y, [0, 1, 2], metrics=["cohen_kappa_linear"], B=50)
    assert obs.spacing == "observed_index"
    assert obs.metrics["cohen_kappa_linear"].estimate == pytest.approx(0.25)
    sc = pair_agreement(
        x, y, [0, 1, 2], scale=[1.0, 2.0, 3.0, 4.0, 5.0], metrics=["cohen_kappa_linear"], B=50
    )
    assert sc.spacing == "scale_index"
    assert sc.metrics["cohen_kappa_linear"].estimate == pytest.approx(0.625)
    assert np.isclose(
        pair_agreement(x, y, [0, 1, 2], spacing="value", metrics=["cohen_kappa_linear"], B=50)
        .metrics["cohen_kappa_linear"]
        .estimate,
        0.625,
    )
