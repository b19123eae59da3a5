"""Rubrics: strict, hashed YAML descriptions of what judges score.

>>> from attune_judge.rubrics import load_rubric
>>> rubric = load_rubric("attunebench-reference")
>>> [c.id for c in rubric.criteria]
['overall_score', 'emotional_appropriateness', 'helpfulness', 'tone_match']
"""

from attune_judge.rubrics._load import (
    available_rubrics,
    load_rubric,
    parse_rubric,
    read_yaml,
    validate_mapping,
)
from attune_judge.rubrics._model import (
    Criterion,
    Rubric,
    Scale,
)

__all__ = [
    "Criterion",
    "Rubric",
    "Scale",
    "available_rubrics",
    "load_rubric",
    "parse_rubric",
    "read_yaml",
    "validate_mapping",
]
