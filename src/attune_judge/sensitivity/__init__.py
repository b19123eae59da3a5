"""Rubric sensitivity: run declared variants of a rubric and judge, and test whether rankings
survive them (scores, Kendall τ, rank flips, criterion shifts, variance decomposition).

``attune-judge sensitivity DATA --variants V.yaml [--rubric R] [--lm L] -o RUN`` is
:func:`run_sensitivity`; the pieces are usable alone:

- :func:`load_variants` reads a variants file (schema in ``_variants.py``; example in
  ``rubrics/variants/``) and :func:`resolve_variants` turns it into concrete :class:`Variant` s,
  each a perturbed rubric (own content hash, so own judge_id) plus judge options;
- :func:`analyze_sensitivity` compares the variants' model scores on a tidy
  :class:`ScoreTable` (paired cluster bootstrap shared by all variants and models) and
  gives a verdict per variant by :data:`RULE`;
- :func:`variance_decomposition` splits scores into model, conversation, variant and judge
  components (ANOVA method of moments, or REML with statsmodels MixedLM).

>>> from attune_judge.sensitivity import load_variants, resolve_variants
>>> from attune_judge.rubrics import load_rubric
>>> from attune_judge import shipped_dir
>>> spec = load_variants(shipped_dir("rubrics") / "variants/attunebench-reference-variants.yaml")
>>> [v.name for v in resolve_variants(spec, load_rubric("attunebench-reference"))][:3]
['base', 'shuffled', 'scale-1-5']
"""

from attune_judge.sensitivity._analysis import analyze_sensitivity
from attune_judge.sensitivity._resolve import resolve_variants
from attune_judge.sensitivity._run import SensitivityConfig, SensitivityResult, run_sensitivity
from attune_judge.sensitivity._table import CriterionTable, ScoreTable
from attune_judge.sensitivity._variance import variance_decomposition
from attune_judge.sensitivity._variants import load_variants

__all__ = [
    "CriterionTable",
    "ScoreTable",
    "SensitivityConfig",
    "SensitivityResult",
    "analyze_sensitivity",
    "load_variants",
    "resolve_variants",
    "run_sensitivity",
    "variance_decomposition",
]
