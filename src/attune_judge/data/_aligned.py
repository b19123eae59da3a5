"""The aligned judge's manifest (``aligned-judge.json``) as a record, low enough for both
sides: ``judges`` reads an aligned judge's directory with it and ``runs`` types the ``align``
run's summary with it (the directory's layout is in :mod:`attune_judge.judges._aligned`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CALIBRATED_FORMAT", "FORMAT", "AlignedJudgeManifest", "ScoreMap"]

FORMAT = "attune-aligned-judge/1"
CALIBRATED_FORMAT = "attune-calibrated-judge/1"
"""``align --method calibrate``: the same manifest, ``head.json`` in place of ``program.json``."""


class ScoreMap(BaseModel):
    """Per criterion: judge score ``x`` → human-scale value ``y`` (non-decreasing in ``x``).

    Between the fitted points the map interpolates linearly; outside them it is constant.
    """

    model_config = ConfigDict(extra="forbid")

    points: dict[str, tuple[list[float], list[float]]]
    """Criterion → (judge scores ascending, mapped values)."""
    n: dict[str, int]
    """Criterion → pairs it was fitted on."""

    def apply(self, criterion: str, value: float) -> float:
        """The mapped value (the value itself for a criterion without a map)."""
        import numpy as np

        if criterion not in self.points:
            return float(value)
        x, y = self.points[criterion]
        return float(np.interp(value, x, y))

    def apply_all(self, scores: Mapping[str, float]) -> dict[str, float]:
        """Every criterion of ``scores`` mapped."""
        return {k: self.apply(k, v) for k, v in scores.items()}


class AlignedJudgeManifest(BaseModel):
    """What ``aligned-judge.json`` records."""

    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    rubric: dict[str, str]
    """Rubric id, version and content hash."""
    judge_program: str
    """``reference`` (the program that was optimised)."""
    judge_options: dict[str, Any]
    """``use_reference``, ``reasoning``."""
    lm: str
    """The model string the judge was aligned on."""
    lm_spec: dict[str, Any] = Field(default_factory=dict)
    """The model's identity as recorded in judge specs."""
    optimizer: dict[str, Any]
    """Optimizer name and settings."""
    metric: str
    """Metric the optimizer maximised (``ordinal`` ...)."""
    split: dict[str, Any]
    """Seed, fractions, counts of conversations and items per part."""
    source: str
    """Labels the judge was aligned to."""
    held_out: dict[str, Any] = Field(default_factory=dict)
    """Summary of the held-out proof (before, after, improvement, verdict)."""
    score_map: ScoreMap | None = None
    """Monotone map of the judge's scores to the human scale (applied when judging)."""
    program_sha256: str
    """sha256 of ``program.json`` (a calibrated judge: of ``head.json``)."""
    artifact_hash: str
    """Hash of program, rubric, options and score map: part of the judge id."""
    calls: dict[str, int] = Field(default_factory=dict)
    """LM calls spent: optimizer, evaluation."""
    created_at: str
    versions: dict[str, str] = Field(default_factory=dict)
