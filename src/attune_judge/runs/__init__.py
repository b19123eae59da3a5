"""Typed run records: what a run directory's ``summary.json`` holds, per run kind.

``parse_summary(data)`` reads any summary into its kind's model (:data:`SUMMARY_MODELS`);
``json_schema(kind)`` gives the JSON Schema of ``manifest.json`` or of a kind's summary (also
shipped as ``runs/schemas/<kind>.schema.json`` and printed by ``attune-judge schema KIND``).
Every summary carries ``schema_version`` (:data:`SCHEMA_VERSION`).
"""

from attune_judge.runs._records import (
    ALIGN_KIND,
    SCHEMA_VERSION,
    SUMMARY_MODELS,
    BenchSummary,
    CalibrateSummary,
    DegenerateFinding,
    DemoSummary,
    JudgeBlock,
    ModelBlock,
    PpiSummary,
    RunFacts,
    RunSummary,
    ScoreInterval,
    ScoreSummary,
    SensitivitySummary,
    ValidateSummary,
    parse_summary,
)
from attune_judge.runs._schema import SCHEMA_DIR, json_schema, schema_kinds, write_schemas

__all__ = [
    "ALIGN_KIND",
    "SCHEMA_DIR",
    "SCHEMA_VERSION",
    "SUMMARY_MODELS",
    "BenchSummary",
    "CalibrateSummary",
    "DegenerateFinding",
    "DemoSummary",
    "JudgeBlock",
    "ModelBlock",
    "PpiSummary",
    "RunFacts",
    "RunSummary",
    "ScoreInterval",
    "ScoreSummary",
    "SensitivitySummary",
    "ValidateSummary",
    "json_schema",
    "parse_summary",
    "schema_kinds",
    "write_schemas",
]
