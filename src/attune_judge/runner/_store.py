"""The run directory: manifest, append-only judgments, resume state, secret redaction.

Layout (ARCHITECTURE.md)::

    runs/<name>/
      manifest.json     what was run: arguments, versions, judge specs, hashes, seed
      judgments.jsonl   append-only log, one Judgment per line, flushed per record
      summary.json      aggregates per judge and model (runner/_summary.py)
      report.md         a short human summary (runner/_report.py)

``judgments.jsonl`` is a log: when an ``lm_error`` judgment is retried on resume, the new
record is appended and the *last* record of each ``(item_id, judge_id)`` is the effective one.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import re
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attune_judge._schema_version import SCHEMA_VERSION
from attune_judge.data import JsonlAppender, Judgment, read_jsonl
from attune_judge.errors import UserError
from attune_judge.runner._plan import TaskKey

__all__ = [
    "FINISHED_STATUSES",
    "RunDir",
    "RunManifest",
    "cut_torn_tail",
    "effective_judgments",
    "redact",
    "secret_values",
    "versions",
]

log = logging.getLogger(__name__)

FINISHED_STATUSES = frozenset({"ok", "parse_error", "refused"})
"""Statuses that resume skips. ``lm_error`` is not final: resume tries it again (the call
was not answered, so nothing is in the LM cache and nothing was paid for)."""

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_MIN_SECRET_LEN = 8


def secret_values(environ: dict[str, str] | None = None) -> list[str]:
    """Values of environment variables whose name looks like a credential (``*_API_KEY`` ...).

    Only values of at least 8 characters count, so that ``FOO_KEY=1`` does not redact every
    ``1`` in a run directory.
    """
    env = os.environ if environ is None else environ
    vals = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET_LEN}
    return sorted(vals, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``***``."""
    for s in secrets:
        if s in text:
            text = text.replace(s, "***")
    return text


def versions() -> dict[str, str]:
    """Versions of attune-judge, dspy and Python, and the platform."""
    from attune_judge import __version__

    try:
        from importlib.metadata import version

        dspy_version = version("dspy")
    except Exception:  # pragma: no cover - dspy is a hard dependency
        dspy_version = "unknown"
    return {
        "attune_judge": __version__,
        "dspy": dspy_version,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


class RunManifest(BaseModel):
    """``manifest.json``: everything needed to know what a run directory holds."""

    model_config = ConfigDict(extra="forbid")

    command: str
    """The command that made the run (``score``, or another helper's task kind)."""
    arguments: dict[str, Any]
    """The command's arguments (paths, model string, options). Never a credential."""
    versions: dict[str, str]
    """attune-judge, dspy and Python versions, and the platform."""
    judges: dict[str, dict[str, Any]]
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
    """How many times the run was invoked (1 + resumes)."""

    def identity(self) -> dict[str, Any]:
        """What must not change between a run and its resume."""
        return {
            "command": self.command,
            "judge_ids": sorted(self.judges),
            "data_fingerprint": self.data_fingerprint,
            "models": sorted(self.models),
        }


def effective_judgments(judgments: Iterable[Judgment]) -> dict[TaskKey, Judgment]:
    """The last judgment of each ``(item_id, judge_id)`` (the log's current state)."""
    out: dict[TaskKey, Judgment] = {}
    for j in judgments:
        out[(j.item_id, j.judge_id)] = j
    return out


def cut_torn_tail(path: Path) -> str | None:
    """Cut a torn last line (a write interrupted by a crash) off a JSONL file.

    The cut bytes are appended to ``<name>.torn`` beside the file and a warning is logged. A
    complete last record that only lacks its newline gets the newline. Returns the torn text,
    if any. Without this, the next append would bury the torn line inside the file.
    """
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return None
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return None
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    try:
        json.loads(tail)
    except ValueError:
        with path.with_name(path.name + ".torn").open("ab") as fh:
            fh.write(tail + b"\n")
        with path.open("r+b") as fh:
            fh.truncate(cut)
        log.warning(
            "%s: dropped a torn last line of %d bytes (kept in %s.torn)", path, len(tail), path.name
        )
        return tail.decode("utf-8", errors="replace")
    with path.open("ab") as fh:
        fh.write(b"\n")
    return None


class RunDir:
    """One run directory on disk."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest_path = self.path / "manifest.json"
        self.judgments_path = self.path / "judgments.jsonl"
        self.summary_path = self.path / "summary.json"
        self.report_path = self.path / "report.md"
        self._secrets = secret_values()

    # -- manifest ---------------------------------------------------------------------------

    def read_manifest(self) -> RunManifest | None:
        """The manifest, or ``None`` for a new directory."""
        if not self.manifest_path.exists():
            return None
        try:
            return RunManifest.model_validate_json(self.manifest_path.read_text("utf-8"))
        except ValueError as exc:
            raise UserError(
                f"{self.manifest_path}: not a valid run manifest ({exc.__class__.__name__})",
                ["use a new output directory, or remove the damaged one"],
            ) from None

    def open_manifest(self, manifest: RunManifest) -> RunManifest:
        """Write the manifest of a new run, or check and update the one of a resumed run.

        Raises
        ------
        UserError
            When the directory holds a run of other judges (a changed rubric or model), other
            data or other models: their judgments would be mixed silently otherwise.
        """
        old = self.read_manifest()
        if old is None:
            if self.judgments_path.exists() and self.judgments_path.stat().st_size > 0:
                raise UserError(
                    f"{self.path}: has judgments.jsonl but no manifest.json",
                    ["use a new output directory (-o)"],
                )
            self.write_json(self.manifest_path, manifest.model_dump(mode="json"))
            return manifest
        ours, theirs = manifest.identity(), old.identity()
        if ours != theirs:
            diffs = [
                f"{k}: this run {ours[k]!r}, directory {theirs[k]!r}"
                for k in ours
                if ours[k] != theirs[k]
            ]
            raise UserError(
                f"{self.path} holds a different run; refusing to mix judgments",
                [
                    *diffs,
                    "a changed rubric, model or decoding setting is a different judge_id; "
                    "score it into a new output directory (-o)",
                ],
            )
        merged = manifest.model_copy(
            update={"created_at": old.created_at, "invocations": old.invocations + 1}
        )
        self.write_json(self.manifest_path, merged.model_dump(mode="json"))
        return merged

    # -- judgments --------------------------------------------------------------------------

    def repair_torn_tail(self) -> str | None:
        """Cut a torn last line off ``judgments.jsonl`` (see :func:`cut_torn_tail`)."""
        return cut_torn_tail(self.judgments_path)

    def read_judgments(self) -> list[Judgment]:
        """Every judgment in the log, in write order (a torn last line is skipped)."""
        if not self.judgments_path.exists():
            return []
        return read_jsonl(self.judgments_path, Judgment, tolerate_torn_tail=True)

    def appender(self, *, fsync_interval_s: float | None = 0.2) -> JudgmentWriter:
        """The single writer of ``judgments.jsonl`` for this invocation."""
        return JudgmentWriter(self.judgments_path, self._secrets, fsync_interval_s=fsync_interval_s)

    # -- plain files ------------------------------------------------------------------------

    def write_json(self, path: Path, obj: Any) -> None:
        """Write JSON atomically, with secret values redacted (``summary.json`` gets its
        ``schema_version``)."""
        if path == self.summary_path and isinstance(obj, dict):
            obj = {"schema_version": SCHEMA_VERSION, **obj}
        self.write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")

    def write_text(self, path: Path, text: str) -> None:
        """Write text atomically (temporary file, then rename), with secret values redacted."""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(redact(text, self._secrets), encoding="utf-8")
        tmp.replace(path)


class JudgmentWriter:
    """Appends judgments: one write + flush per record, secrets redacted, fsync grouped.

    Every record is flushed to the operating system before the next one is taken, so a killed
    process (SIGKILL, OOM, Ctrl-C) loses nothing that was appended. ``fsync`` (which only
    matters for a power cut or a kernel crash) is a group commit: at most every
    ``fsync_interval_s`` seconds and at close, because an fsync per record costs milliseconds
    on the single consumer thread and would bound the whole run's throughput (see
    benchmarks/README.md). ``fsync_interval_s=0`` fsyncs every record; ``None`` never.
    """

    def __init__(
        self, path: Path, secrets: list[str], *, fsync_interval_s: float | None = 0.2
    ) -> None:
        self._secrets = secrets
        self._out = JsonlAppender(path, fsync=fsync_interval_s == 0)
        self._interval = fsync_interval_s if fsync_interval_s else None
        # fsync applies to the file, not the descriptor: a second one keeps JsonlAppender's own
        self._sync_fd = os.open(path, os.O_RDONLY) if self._interval else None
        self._last_sync = time.monotonic()

    def append(self, judgment: Judgment) -> None:
        """Append one judgment (flushed when this returns)."""
        if self._secrets:
            text = judgment.model_dump_json()
            clean = redact(text, self._secrets)
            if clean != text:
                judgment = Judgment.model_validate_json(clean)
        self._out.append(judgment)
        if self._sync_fd is not None and self._interval is not None:
            now = time.monotonic()
            if now - self._last_sync >= self._interval:
                os.fsync(self._sync_fd)
                self._last_sync = now

    def close(self) -> None:
        """fsync (when grouped) and close."""
        if self._sync_fd is not None:
            os.fsync(self._sync_fd)
            os.close(self._sync_fd)
            self._sync_fd = None
        self._out.close()

    def __enter__(self) -> JudgmentWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
