"""Run directories of the commands that run no judge (``calibrate``, ``rank --human``):
``manifest.json`` (what was asked), ``summary.json`` (the numbers, through
:func:`attune_judge.runs.write_summary`) and the report through
:func:`attune_judge.report.write_report`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attune_judge._version import __version__
from attune_judge.errors import UserError
from attune_judge.report import write_calibration_run, write_report
from attune_judge.runs import CommandManifest, RunSummary, read_manifest, write_summary
from attune_judge.runs import write_manifest as write

__all__ = ["CALIBRATE_MANIFEST", "check_out_dir", "write_manifest", "write_run_dir"]

CALIBRATE_MANIFEST = "calibrate"
"""``command`` of the manifest of a ``calibrate`` run directory."""


def check_out_dir(out: Path, command: str = CALIBRATE_MANIFEST, option: str = "--out") -> None:
    """Refuse to write into a file, or into a run directory of another command."""
    if (out.exists() and not out.is_dir()) or out.suffix.lower() in (".md", ".json", ".txt"):
        raise UserError(f"{out}: {option} must be a directory (use --output for a single file)")
    other = (out / "judgments.jsonl").exists()
    if not other and (out / "manifest.json").exists():
        try:
            manifest = read_manifest(out)
            other = manifest is None or manifest.command != command
        except UserError:
            other = True
    if other:
        raise UserError(
            f"{out}: holds another command's run (judgments.jsonl or manifest.json); "
            f"choose a new directory for {option}"
        )


def write_manifest(out: Path, command: str, arguments: dict[str, Any]) -> None:
    """``manifest.json``: the command, when, its (non-``None``) arguments, the version."""
    arguments = json.loads(json.dumps(arguments, default=str))
    write(
        out,
        CommandManifest(
            command=command,
            arguments={k: v for k, v in arguments.items() if v is not None},
            versions={"attune-judge": __version__},
        ),
    )


def write_run_dir(
    out: Path,
    arguments: dict[str, Any],
    *,
    summary: RunSummary | None = None,
    command: str = CALIBRATE_MANIFEST,
    **calibration: Any,
) -> tuple[Path, Path]:
    """Write ``out``: manifest.json, summary.json, report.md/.html and figures.

    ``summary`` is the summary's kind and blocks (``schema_version`` is added); without it,
    ``calibration`` holds ``report``, ``human`` and ``judge`` of a rating calibration, which
    :func:`attune_judge.report.write_calibration_run` stores and renders.
    """
    write_manifest(out, command, arguments)
    if summary is None:
        return write_calibration_run(
            out,
            calibration["report"],
            human=calibration["human"],
            judge=calibration["judge"],
            label_weighting=calibration.get("label_weighting"),
        )
    write_summary(out, summary)
    return write_report(out)
