"""Rubric sensitivity: run declared variants of a rubric and judge, and test whether rankings
survive them (scores, Kendall τ, rank flips, criterion shifts, variance decomposition).

>>> from attune_judge.sensitivity import load_variants, resolve_variants
>>> from attune_judge.rubrics import load_rubric
>>> from attune_judge._resources import shipped_dir
>>> spec = load_variants(shipped_dir("rubrics") / "variants/attunebench-reference-variants.yaml")
>>> [v.name for v in resolve_variants(spec, load_rubric("attunebench-reference"))][:3]
['base', 'shuffled', 'scale-1-5']
"""

from attune_judge.sensitivity._analysis import RULE, analyze_sensitivity
from attune_judge.sensitivity._perturb import (
    change_scale,
    drop_anchors,
    paraphrase_criteria,
    remove_criterion,
    replace_instructions,
    rescale_level,
    shuffle_criteria,
)
from attune_judge.sensitivity._resolve import Variant, apply_perturbation, resolve_variants
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
from attune_judge.sensitivity._run import (
    SensitivityConfig,
    SensitivityResult,
    judgment_tables,
    run_sensitivity,
)
from attune_judge.sensitivity._summary import sensitivity_block, tau_matrix
from attune_judge.sensitivity._table import CriterionTable, ScoreTable
from attune_judge.sensitivity._variance import (
    FACTOR_ORDER,
    is_proportional,
    variance_decomposition,
)
from attune_judge.sensitivity._variants import (
    BASE_VARIANT,
    AnalysisSettings,
    VariantsFile,
    load_variants,
    parse_variants,
)

__all__ = [
    "BASE_VARIANT",
    "FACTOR_ORDER",
    "RULE",
    "AnalysisSettings",
    "CriterionShift",
    "CriterionTable",
    "ModelScore",
    "PairComparison",
    "ScoreTable",
    "SensitivityAnalysis",
    "SensitivityConfig",
    "SensitivityResult",
    "VarianceComponent",
    "VarianceDecomposition",
    "Variant",
    "VariantRanking",
    "VariantVerdict",
    "VariantsFile",
    "analyze_sensitivity",
    "apply_perturbation",
    "change_scale",
    "drop_anchors",
    "is_proportional",
    "judgment_tables",
    "load_variants",
    "paraphrase_criteria",
    "parse_variants",
    "remove_criterion",
    "replace_instructions",
    "rescale_level",
    "resolve_variants",
    "run_sensitivity",
    "sensitivity_block",
    "shuffle_criteria",
    "tau_matrix",
    "variance_decomposition",
]
