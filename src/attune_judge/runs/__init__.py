"""Typed run records: the one door to a run directory's ``manifest.json`` and ``summary.json``.

``write_summary(run_dir, summary)`` is how every command writes its summary (validated,
``schema_version`` stamped, redacted, atomic) and ``read_summary(run_dir)`` how every reader
loads it into its kind's model (:data:`SUMMARY_MODELS`); ``write_manifest`` writes a
:class:`RunManifest` (runs of the runner) or a :class:`CommandManifest`. ``json_schema(kind)``
gives the JSON Schema of ``manifest.json`` or of a kind's summary (also shipped as
``runs/schemas/<kind>.schema.json`` and printed by ``attune-judge schema KIND``).
"""

from attune_judge._schema_version import SCHEMA_VERSION
from attune_judge.runs._agreement import (
    AgreementMatrix,
    CalibrationBlock,
    CalibrationCurve,
    CalibrationPart,
    Confusion,
)
from attune_judge.runs._bench import (
    BenchBlock,
    BenchBootstrap,
    BenchLeaderboard,
    BenchMetric,
    BenchRow,
    BenchTask,
    Discriminability,
    TauRow,
)
from attune_judge.runs._files import write_json, write_text
from attune_judge.runs._io import (
    MIGRATIONS,
    read_summary,
    record_json,
    summary_json,
    write_manifest,
    write_summary,
)
from attune_judge.runs._manifest import CommandManifest, RunManifest
from attune_judge.runs._records import (
    SUMMARY_MODELS,
    AlignSummary,
    BenchSummary,
    CalibrateSummary,
    DegenerateFinding,
    DemoSummary,
    JudgeBlock,
    JudgedSummary,
    ModelBlock,
    PairwiseBlock,
    PanelBlock,
    PanelNote,
    PpiSummary,
    RunFacts,
    RunSummary,
    ScoreSummary,
    SensitivitySummary,
    ValidateSummary,
    parse_summary,
)
from attune_judge.runs._schema import SCHEMA_DIR, json_schema, schema_kinds, write_schemas
from attune_judge.runs._study import (
    Flip,
    PpiBlock,
    SensitivityBlock,
    SensitivityVariant,
    StudySettings,
    TauMatrix,
    VarianceShare,
)
from attune_judge.runs._validation import (
    BaselineDimension,
    BaselinesBlock,
    CalibratedBlock,
    DuoResult,
    GroupComparison,
    JudgeRow,
    ValidationInfo,
    ValidationResult,
)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_DIR",
    "SCHEMA_VERSION",
    "SUMMARY_MODELS",
    "AgreementMatrix",
    "AlignSummary",
    "BaselineDimension",
    "BaselinesBlock",
    "BenchBlock",
    "BenchBootstrap",
    "BenchLeaderboard",
    "BenchMetric",
    "BenchRow",
    "BenchSummary",
    "BenchTask",
    "CalibrateSummary",
    "CalibratedBlock",
    "CalibrationBlock",
    "CalibrationCurve",
    "CalibrationPart",
    "CommandManifest",
    "Confusion",
    "DegenerateFinding",
    "DemoSummary",
    "Discriminability",
    "DuoResult",
    "Flip",
    "GroupComparison",
    "JudgeBlock",
    "JudgeRow",
    "JudgedSummary",
    "ModelBlock",
    "PairwiseBlock",
    "PanelBlock",
    "PanelNote",
    "PpiBlock",
    "PpiSummary",
    "RunFacts",
    "RunManifest",
    "RunSummary",
    "ScoreSummary",
    "SensitivityBlock",
    "SensitivitySummary",
    "SensitivityVariant",
    "StudySettings",
    "TauMatrix",
    "TauRow",
    "ValidateSummary",
    "ValidationInfo",
    "ValidationResult",
    "VarianceShare",
    "json_schema",
    "parse_summary",
    "read_summary",
    "record_json",
    "schema_kinds",
    "summary_json",
    "write_json",
    "write_manifest",
    "write_schemas",
    "write_summary",
    "write_text",
]
