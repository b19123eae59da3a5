"""End to end on real human and LLM-judge labels (Kumar et al. 2025, empathic communication)."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from attune_judge.calibration import calibrate, calibration_markdown
from tests.conftest import DATASETS

SRC = DATASETS / "empathic-communication"


def test_three_experts_vs_three_llm_judges_on_one_dimension() -> None:
    from attune_judge.data.adapters import convert_empathic_communication

    ratings = convert_empathic_communication(SRC).ratings
    dim = "m_understood"
    human = [r for r in ratings if r.rater_group == "experts" and r.dimension == dim]
    judges = [r for r in ratings if r.rater_group == "llm" and r.dimension == dim]
    assert human and judges
    rep = calibrate(human, judges, B=200, measurement="ordinal")
    d = rep.dimensions[0]
    assert d.join.matched == len({r.item_id for r in human})
    assert sorted(j.judge for j in d.judges) == ["claude", "gemini", "gpt"]
    # humans-only α equals the krippendorff package on the raw matrix (independent pivot)
    items = sorted({r.item_id for r in human})
    raters = sorted({r.rater for r in human})
    mat = np.full((len(raters), len(items)), np.nan)
    for r in human:
        mat[raters.index(r.rater), items.index(r.item_id)] = float(r.value)  # type: ignore[arg-type]
    expected = krippendorff.alpha(reliability_data=mat, level_of_measurement="ordinal")
    assert d.human_alpha is not None
    assert d.human_alpha.estimate == pytest.approx(expected)
    for j in d.judges:
        assert j.alt_test is not None and len(j.alt_test.humans) == 3
        assert j.ceiling is not None and j.ceiling.mean_human is not None
    assert "Judge `gpt` vs humans" in calibration_markdown(rep)
