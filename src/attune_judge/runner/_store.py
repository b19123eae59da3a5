"""The run directory: manifest, append-only judgments, resume state, secret redaction.

Layout (ARCHITECTURE.md)::

    runs/<name>/
      manifest.json     what was run: arguments, versions, judge specs, hashes, seed
      judgments.jsonl   append-only log, one Judgment per line, flushed per record
      summary.json      aggregates per judge and model (runner/_summary.py); the report
                        (report.md/.html) is the report package's, never the runner's

``judgments.jsonl`` is a log: when an ``lm_error`` judgment is retried on resume, the new
record is appended and the *last* record of each ``(item_id, judge_id)`` is the effective one.

One process at a time: :meth:`RunDir.lock` holds an exclusive lock (``.attune.lock``, holding
the PID) for the whole invocation; a second process on the same directory is refused with the
holder's PID. The lock is an ``flock`` on the file, so the kernel releases it when its holder
dies: the lock file a killed run leaves behind is taken over by the next one.
Writes fail cleanly: a judgment line is written whole or cut back off, JSON files are written
to a temporary file and renamed (the temporary file is removed on failure), and every
file-system failure (read-only, disk full, no permission) is a ``UserError`` naming the path.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from attune_judge._secrets import redact, secret_values
from attune_judge._version import __version__
from attune_judge.data import JsonlAppender, Judgment, effective_judgments, read_jsonl, write_error
from attune_judge.errors import UserError
from attune_judge.runs import RunManifest, read_manifest, write_json

__all__ = [
    "FINISHED_STATUSES",
    "LOCK_NAME",
    "RunDir",
    "RunManifest",
    "cut_torn_tail",
    "effective_judgments",
    "lock_path",
    "redact",
    "secret_values",
    "versions",
]

log = logging.getLogger(__name__)

FINISHED_STATUSES = frozenset({"ok", "parse_error", "refused"})
"""Statuses that resume skips. ``lm_error`` is not final: resume tries it again (the call
was not answered, so nothing is in the LM cache and nothing was paid for)."""

LOCK_NAME = ".attune.lock"
"""The lock file inside a run directory (exists only while a process works on it)."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(fd: int) -> int | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 64).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


@contextlib.contextmanager
def lock_path(path: Path, what: str) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (a lock file) while the block runs.

    ``what`` names the thing locked in the refusal (``run directory runs/x``).

    Raises
    ------
    UserError
        Another live process holds the lock (its PID is named), or the lock file cannot be
        created (read-only directory, ...; the path is named).
    """
    import fcntl

    path = Path(path)
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)  # a bad output path: OSError names it
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise write_error(path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"PID {holder}" if holder is not None else "a process that is starting"
            raise UserError(
                f"{what} is in use by another attune-judge process ({who}); wait for it to "
                f"finish or stop it, then run the same command again (lock file {path})"
            ) from None
        try:  # the file may have been unlinked by a holder releasing it meanwhile: retry
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    previous = _read_pid(fd)
    if previous is not None and previous != os.getpid() and not _pid_alive(previous):
        log.info("%s: took over the lock left by PID %d (no longer running)", path, previous)
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as exc:
        os.close(fd)
        raise write_error(path, exc) from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def versions() -> dict[str, str]:
    """Versions of attune-judge, dspy and Python, and the platform."""
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


def failure_reasons(judgments: Iterable[Judgment]) -> dict[str, int]:
    """Failed judgments counted by ``status (reason)``, e.g. ``parse_error (out_of_scale)``.

    >>> failure_reasons([Judgment(item_id="a", judge_id="j", status="parse_error",
    ...                           details={"reason": "out_of_scale"}),
    ...                  Judgment(item_id="b", judge_id="j", status="lm_error"),
    ...                  Judgment(item_id="c", judge_id="j")])
    {'lm_error (no reason given)': 1, 'parse_error (out_of_scale)': 1}
    """
    counts: dict[str, int] = {}
    for j in judgments:
        if j.status != "ok":
            why = f"{j.status} ({(j.details or {}).get('reason') or 'no reason given'})"
            counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items()))


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
        self.lock_path = self.path / LOCK_NAME

    @property
    def _secrets(self) -> list[str]:
        # read at each write: credentials registered after this object was made count too
        return secret_values()

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The exclusive lock of this directory for one invocation (see the module docstring)."""
        return lock_path(self.lock_path, f"run directory {self.path}")

    # -- manifest ---------------------------------------------------------------------------

    def read_manifest(self) -> RunManifest | None:
        """The manifest, or ``None`` for a new directory."""
        manifest = read_manifest(self.path)
        if manifest is None or isinstance(manifest, RunManifest):
            return manifest
        raise UserError(
            f"{self.manifest_path}: holds a {manifest.command} run, not a run of judges",
            ["use a new output directory (-o)"],
        )

    def open_manifest(self, manifest: RunManifest) -> RunManifest:
        """Write the manifest of a new run, or check the one of a resumed run.

        The returned manifest counts this invocation; it is written by
        :meth:`commit_manifest` when the invocation finishes (a new run's manifest is written
        at once, with ``invocations=0`` until then).

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
            self.write_json(
                self.manifest_path,
                manifest.model_copy(update={"invocations": 0}).model_dump(mode="json"),
            )
            return manifest.model_copy(update={"invocations": 1})
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
                    "a changed rubric, model, server or decoding setting is a different "
                    "judge_id; score it into a new output directory (-o)",
                ],
            )
        return manifest.model_copy(
            update={"created_at": old.created_at, "invocations": old.invocations + 1}
        )

    def commit_manifest(self, manifest: RunManifest) -> None:
        """Record a finished invocation (``manifest`` from :meth:`open_manifest`)."""
        self.write_json(self.manifest_path, manifest.model_dump(mode="json"))

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
        """Write JSON atomically, with secret values redacted (``runs.write_json``)."""
        write_json(path, obj)


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
        self._path = Path(path)
        self._out = JsonlAppender(path, fsync=fsync_interval_s == 0)
        self._interval = fsync_interval_s if fsync_interval_s else None
        self._sync_fd = self._out.fileno() if self._interval else None
        self._last_sync = time.monotonic()

    def append(self, judgment: Judgment) -> None:
        """Append one judgment (flushed when this returns)."""
        text = judgment.model_dump_json()
        clean = redact(text, self._secrets)
        if clean != text:
            judgment = Judgment.model_validate_json(clean)
        self._out.append(judgment)
        if self._sync_fd is not None and self._interval is not None:
            now = time.monotonic()
            if now - self._last_sync >= self._interval:
                self._sync()
                self._last_sync = now

    def _sync(self) -> None:
        if self._sync_fd is None:
            return
        try:
            os.fsync(self._sync_fd)
        except OSError as exc:
            raise write_error(self._path, exc) from None

    def close(self) -> None:
        """fsync (when grouped) and close."""
        try:
            self._sync()
        finally:
            self._sync_fd = None
            self._out.close()

    def __enter__(self) -> JudgmentWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
