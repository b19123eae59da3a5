"""The arguments (:class:`SensitivityConfig`) and the outcome (:class:`SensitivityResult`) of
:func:`attune_judge.sensitivity.run_sensitivity`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from attune_judge._bootstrap import Replicates
from attune_judge.calibration import SensitivityAnalysis
from attune_judge.lm import LMSettings
from attune_judge.runner import EXIT_FAILURE_BUDGET
from attune_judge.runner._execution import RunSettings

__all__ = ["SensitivityConfig", "SensitivityResult"]


class SensitivityConfig(RunSettings):
    """The arguments of ``attune-judge sensitivity`` (recorded in ``manifest.json``)."""

    model_config = ConfigDict(extra="forbid")

    data: Path
    """AttuneBench data or a JudgeItem JSONL file."""
    variants: Path
    """The variants YAML file."""
    out: Path
    """The run directory."""
    rubric: str | None = None
    """Base rubric (name or YAML path); overrides the file's ``base.rubric``."""
    lm: str | None = None
    """Base judge model; overrides the file's ``base.judge.lm`` (default ``lm_settings.lm``)."""
    jury_lms: list[str] | None = None
    """Several models (``--lm A --lm B``): the base judge, and every variant that keeps the
    base model, is a jury of these (``lm`` is the first); each member's judgment is kept."""
    jury: Literal["mean", "median", "majority"] = "mean"
    """How the jury combines its members per item."""
    lm_settings: LMSettings = LMSettings()
    """Decoding, timeout and cache of every judge model, and the server of the base model(s);
    its ``lm`` is the base model when neither ``lm`` nor the file names one."""
    candidates: Path | None = None
    """Candidates JSONL; without it the AttuneBench pseudo-models are judged."""
    models: list[str] | None = None
    """Candidate models to judge (default: all)."""
    only: list[str] | None = None
    """Run only these variants (and the base)."""
    B: Replicates | None = None
    """Overrides the file's ``analysis.B``."""
    fsync: bool = True
    """fsync each judgment record."""


class SensitivityResult(BaseModel):
    """What ``run_sensitivity`` did and found."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    run_dir: Path
    """The run directory."""
    judge_ids: dict[str, str]
    """Variant → judge_id (variants with identical judges share one)."""
    n_tasks: int
    """Planned (item, judge) tasks (unique judges × items)."""
    n_run: int
    """Judgments made by this invocation."""
    n_skipped: int
    """Tasks already finished before this invocation."""
    stopped: str | None
    """Why the run stopped early, if it did."""
    analysis: SensitivityAnalysis | None
    """The analysis (``None`` when too little was judged to analyse)."""
    analysis_error: str | None = None
    """Why there is no analysis."""

    @property
    def exit_code(self) -> int:
        """0, or 3 when the failure budget stopped the run (as ``score``)."""
        return EXIT_FAILURE_BUDGET if self.stopped else 0
