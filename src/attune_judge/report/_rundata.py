"""Reading a run directory: its manifest and its typed summary (through
:func:`attune_judge.runs.read_summary`), with the summary also as the plain JSON the section
builders read."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attune_judge.errors import UserError
from attune_judge.runs import RunSummary, read_summary, summary_json

__all__ = ["RunData", "load_run", "read_json"]


@dataclasses.dataclass(frozen=True)
class RunData:
    """What a section builder may read: the directory, its manifest and summary."""

    path: Path
    """The run directory."""
    manifest: Mapping[str, Any]
    """``manifest.json`` (empty when absent)."""
    summary: Mapping[str, Any]
    """``summary.json`` as JSON, as read into its model (empty when absent)."""
    record: RunSummary | None = None
    """The typed summary (``None`` when absent)."""


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; ``{}`` when the file does not exist."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read it as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object at the top level")
    return data


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
    manifest = read_json(path / "manifest.json")
    record = read_summary(path)
    summary = {} if record is None else summary_json(record)
    if not manifest and not summary:
        raise UserError(
            f"{path}: not a run directory (no summary.json or manifest.json)",
            ["pass the output directory (-o) of score, calibrate, bench, sensitivity or demo"],
        )
    return RunData(path, manifest, summary, record)
