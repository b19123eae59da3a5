"""The demo: the validate-a-judge job on real shipped data (recorded LLM judges vs experts,
DUO observers vs participants, bot model and style comparisons, the embedded local judge, a
short rubric-sensitivity run), and ``validate``; both write a report with figures."""

from attune_judge.demo._duo import DuoResult, GroupComparison, duo_analysis, duo_markdown
from attune_judge.demo._recorded import (
    JudgeRow,
    RecordedJudges,
    judge_rows,
    judge_rows_markdown,
    recorded_judges_vs_experts,
)
from attune_judge.demo._report import (
    demo_report,
    judge_rows_table,
    validation_sections,
    write_validation_report,
)
from attune_judge.demo._run import DemoRun, load_calibration_set, run_demo
from attune_judge.demo._sensitivity import (
    SENSITIVITY_VARIANTS_FILE,
    SensitivityPart,
    demo_sensitivity,
)
from attune_judge.demo._validate import (
    VALIDATION_SETS,
    ValidationResult,
    ValidationSet,
    validate_judge,
)

__all__ = [
    "SENSITIVITY_VARIANTS_FILE",
    "VALIDATION_SETS",
    "DemoRun",
    "DuoResult",
    "GroupComparison",
    "JudgeRow",
    "RecordedJudges",
    "SensitivityPart",
    "ValidationResult",
    "ValidationSet",
    "demo_report",
    "demo_sensitivity",
    "duo_analysis",
    "duo_markdown",
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
