"""Reading a run directory: its typed manifest and summary (through
:func:`attune_judge.runs.read_manifest` and :func:`~attune_judge.runs.read_summary`), with the
summary also as the plain JSON the section builders read."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attune_judge.errors import UserError
from attune_judge.runs import (
    CommandManifest,
    RunManifest,
    RunSummary,
    read_manifest,
    read_summary,
    summary_json,
)

__all__ = ["RunData", "load_run"]


@dataclasses.dataclass(frozen=True)
class RunData:
    """What a section builder may read: the directory, its manifest and summary."""

    path: Path
    """The run directory."""
    manifest: RunManifest | CommandManifest | None
    """``manifest.json`` (``None`` when absent)."""
    summary: Mapping[str, Any]
    """``summary.json`` as JSON, as read into its model (empty when absent)."""
    record: RunSummary | None = None
    """The typed summary (``None`` when absent)."""


def load_run(run_dir: Path | str) -> RunData:
    """Read a run directory's manifest and summary.

    Raises
    ------
    UserError
        When the directory does not exist or holds neither ``summary.json`` nor
        ``manifest.json``.
    """
    path = Path(run_dir)
    if path.is_file():
        raise UserError(f"{path}: is a file; pass the run directory that holds summary.json")
    if not path.is_dir():
        raise UserError(f"{path}: no such run directory")
    manifest = read_manifest(path)
    record = read_summary(path)
    summary = {} if record is None else summary_json(record)
    if manifest is None and not summary:
        raise UserError(
            f"{path}: not a run directory (no summary.json or manifest.json)",
            ["pass the output directory (-o) of score, calibrate, bench, sensitivity or demo"],
        )
    return RunData(path, manifest, summary, record)
