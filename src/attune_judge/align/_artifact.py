"""The aligned-judge artifact; it lives in :mod:`attune_judge.judges._aligned` (read side, so
``build_judge`` can load it without importing ``align``) and is re-exported here."""

from attune_judge.judges._aligned import (
    ARTIFACT_FILE,
    FORMAT,
    AlignedJudge,
    AlignedJudgeManifest,
    aligned_rubric,
    artifact_hash,
    fitted_items,
    held_out_items,
    is_aligned_judge,
    read_manifest,
)
from attune_judge.judges._factory import load_aligned_judge

__all__ = [
    "ARTIFACT_FILE",
    "FORMAT",
    "AlignedJudge",
    "AlignedJudgeManifest",
    "aligned_rubric",
    "artifact_hash",
    "fitted_items",
    "held_out_items",
    "is_aligned_judge",
    "load_aligned_judge",
    "read_manifest",
]
