"""``manifest.json``: what a run directory holds (written by the runner and every command)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeSpec

__all__ = ["CommandManifest", "JudgeSpec", "RunManifest"]

Arguments = dict[str, Any]
"""A command's arguments as given (paths, model string, options): as many layouts as commands
and options, written from the command's own typed configuration; never a credential."""


class RunManifest(BaseModel):
    """``manifest.json``: everything needed to know what a run directory holds."""

    model_config = ConfigDict(extra="forbid")

    command: str
    """The command that made the run (``score``, or another helper's task kind)."""
    arguments: Arguments
    """The command's arguments (paths, model string, options). Never a credential."""
    versions: dict[str, str]
    """attune-judge, dspy and Python versions, and the platform."""
    judges: dict[str, JudgeSpec]
    """Judge spec per judge_id (program, rubric id/version/hash, lm string, decoding)."""
    rubric_hashes: dict[str, str | None]
    """Rubric content hash per judge_id (``None`` for judges without a rubric)."""
    data_fingerprint: str
    """SHA-256 over the content of all input files (data and candidates)."""
    inputs: dict[str, str]
    """SHA-256 per input path."""
    models: list[str]
    """The candidate models scored."""
    seed: int
    """Seed of the bootstrap (and of the LM where the provider honours one)."""
    n_tasks: int
    """Number of planned (item, judge) tasks."""
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    """When the run directory was first made."""
    updated_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    """When the run was last invoked."""
    invocations: int = 1
    """Invocations of the run that finished (a failed or interrupted one is not counted)."""

    def identity(self) -> dict[str, Any]:
        """What must not change between a run and its resume."""
        return {
            "command": self.command,
            "judge_ids": sorted(self.judges),
            "data_fingerprint": self.data_fingerprint,
            "models": sorted(self.models),
        }


class CommandManifest(BaseModel):
    """``manifest.json`` of a command that runs no judge through the runner (``calibrate``,
    ``rank --human``, ``demo``, ``validate``, ``align``): what was asked, when, with what."""

    model_config = ConfigDict(extra="forbid")

    command: str
    """The command (``calibrate``, ``rank``, ``align``, ...)."""
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    """When the directory was written."""
    arguments: Arguments
    """The command's (non-``None``) arguments. Never a credential."""
    versions: dict[str, str]
    """The attune-judge version (``attune-judge``) and any other recorded ones."""
