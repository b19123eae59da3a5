"""The demo: the validate-a-judge job on real shipped data (recorded LLM judges vs experts,
DUO observers vs participants, bot model and style comparisons, the embedded local judge, a
short rubric-sensitivity run), written as one report with figures.

Validating a judge itself (``attune-judge validate``, the recorded judges beside the experts)
lives in :mod:`attune_judge.validate`; its names are re-exported here for existing callers.
"""

from attune_judge.demo._duo import DuoResult, duo_analysis
from attune_judge.demo._run import DemoRun, run_demo
from attune_judge.demo._sensitivity import demo_sensitivity
from attune_judge.validate import (
    VALIDATION_SETS,
    JudgeRow,
    RecordedJudges,
    ValidationResult,
    ValidationSet,
    judge_rows,
    judge_rows_markdown,
    judge_rows_table,
    load_calibration_set,
    recorded_judges_vs_experts,
    validate_judge,
    validation_sections,
    write_validation_report,
)

__all__ = [
    "VALIDATION_SETS",
    "DemoRun",
    "DuoResult",
    "JudgeRow",
    "RecordedJudges",
    "ValidationResult",
    "ValidationSet",
    "demo_sensitivity",
    "duo_analysis",
    "judge_rows",
    "judge_rows_markdown",
    "judge_rows_table",
    "load_calibration_set",
    "recorded_judges_vs_experts",
    "run_demo",
    "validate_judge",
    "validation_sections",
    "write_validation_report",
]
