"""The demo: the validate-a-judge job on real shipped data (recorded LLM judges vs experts,
DUO observers vs participants, bot model and style comparisons)."""

from attune_judge.demo._duo import DuoResult, GroupComparison, duo_analysis, duo_markdown
from attune_judge.demo._recorded import (
    JudgeRow,
    RecordedJudges,
    judge_rows,
    judge_rows_markdown,
    recorded_judges_vs_experts,
)
from attune_judge.demo._run import DemoRun, load_calibration_set, run_demo
from attune_judge.demo._validate import (
    VALIDATION_SETS,
    ValidationResult,
    ValidationSet,
    validate_judge,
)

__all__ = [
    "VALIDATION_SETS",
    "DemoRun",
    "DuoResult",
    "GroupComparison",
    "JudgeRow",
    "RecordedJudges",
    "ValidationResult",
    "ValidationSet",
    "duo_analysis",
    "duo_markdown",
    "judge_rows",
    "judge_rows_markdown",
    "load_calibration_set",
    "recorded_judges_vs_experts",
    "run_demo",
    "validate_judge",
]
