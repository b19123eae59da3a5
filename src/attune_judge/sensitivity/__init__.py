"""Rubric sensitivity: run declared variants of a rubric and judge, and test whether rankings
survive them (scores, Kendall τ, rank flips, criterion shifts, variance decomposition)."""

from attune_judge.sensitivity._analysis import RULE, analyze_sensitivity
from attune_judge.sensitivity._results import (
    CriterionShift,
    ModelScore,
    PairComparison,
    SensitivityAnalysis,
    VarianceComponent,
    VarianceDecomposition,
    VariantRanking,
    VariantVerdict,
)
from attune_judge.sensitivity._table import CriterionTable, ScoreTable
from attune_judge.sensitivity._variance import (
    FACTOR_ORDER,
    is_proportional,
    variance_decomposition,
)

__all__ = [
    "FACTOR_ORDER",
    "RULE",
    "CriterionShift",
    "CriterionTable",
    "ModelScore",
    "PairComparison",
    "ScoreTable",
    "SensitivityAnalysis",
    "VarianceComponent",
    "VarianceDecomposition",
    "VariantRanking",
    "VariantVerdict",
    "analyze_sensitivity",
    "is_proportional",
    "variance_decomposition",
]
