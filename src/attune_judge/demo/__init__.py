"""The demo: the validate-a-judge job on real shipped data (recorded LLM judges vs experts,
DUO observers vs participants, bot model and style comparisons, the embedded local judge, a
short rubric-sensitivity run), written as one report with figures.

Validating a judge itself (``attune-judge validate``, the recorded judges beside the experts)
lives in :mod:`attune_judge.validate`; ``VALIDATION_SETS`` and ``validate_judge`` are re-exported
here for existing callers.
"""

from attune_judge.demo._run import run_demo
from attune_judge.validate import VALIDATION_SETS, validate_judge

__all__ = [
    "VALIDATION_SETS",
    "run_demo",
    "validate_judge",
]
