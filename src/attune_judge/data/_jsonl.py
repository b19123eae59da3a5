"""JSON Lines reading and writing for records, with errors that name file, line and field."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from attune_judge.data._fs import write_error
from attune_judge.data._records import Judgment
from attune_judge.data._text import reading_utf8
from attune_judge.errors import UserError

__all__ = [
    "JsonlAppender",
    "effective_judgments",
    "format_validation_error",
    "iter_jsonl",
    "read_jsonl",
    "read_judgments",
    "write_jsonl",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


def format_validation_error(exc: ValidationError, where: str) -> list[str]:
    """One ``where: json.path: message`` line per pydantic error."""
    lines = []
    for err in exc.errors():
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        lines.append(f"{where}: {path}: {err['msg']}")
    return lines


def iter_jsonl(path: Path, model: type[M], *, tolerate_torn_tail: bool = False) -> Iterator[M]:
    """Yield one validated record per non-empty line.

    With ``tolerate_torn_tail`` an unparseable *last* line (a write cut short by a crash) is
    skipped with a warning; anywhere else a bad line is an error naming file, line and field.
    """
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: file not found")
    with reading_utf8(path), path.open("r", encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    # the last element is "" when the file ends with a newline
    last_index = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        where = f"{path}:{i + 1}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if tolerate_torn_tail and i == last_index:
                log.warning("%s: ignoring torn last line (%s)", where, exc.msg)
                continue
            raise UserError(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})") from None
        try:
            yield model.model_validate(obj)
        except ValidationError as exc:
            raise UserError(
                f"{where}: invalid {model.__name__} record",
                format_validation_error(exc, where),
            ) from None


def read_jsonl(path: Path, model: type[M], *, tolerate_torn_tail: bool = False) -> list[M]:
    """Read a whole JSONL file of ``model`` records."""
    return list(iter_jsonl(path, model, tolerate_torn_tail=tolerate_torn_tail))


def effective_judgments(judgments: Iterable[Judgment]) -> dict[tuple[str, str], Judgment]:
    """The last judgment of each ``(item_id, judge_id)``: a judgments log's current state (a
    re-run appends a new judgment of an item rather than rewriting the old line)."""
    out: dict[tuple[str, str], Judgment] = {}
    for j in judgments:
        out[(j.item_id, j.judge_id)] = j
    return out


def read_judgments(path: Path) -> list[Judgment]:
    """The effective judgments of a judgments log (:func:`effective_judgments`), a torn last
    line (a killed writer) skipped: what every reader of a run's ``judgments.jsonl`` uses."""
    return list(effective_judgments(read_jsonl(path, Judgment, tolerate_torn_tail=True)).values())


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> int:
    """Write records atomically (temporary file, then rename). Returns the number written."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder; give a file name for the JSONL output")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(rec.model_dump_json(exclude_none=False) + "\n")
                n += 1
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


class JsonlAppender:
    """Append-only writer: each record is one ``write`` of a full line, flushed and fsynced.

    A crash can at worst leave a torn last line, which readers with ``tolerate_torn_tail``
    skip. If the file ends without a newline (a torn line), a newline is written first so the
    next record starts on a line of its own.
    """

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self._fsync = fsync
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            needs_newline = False
            if self.path.exists() and self.path.stat().st_size > 0:
                with self.path.open("rb") as fh:
                    fh.seek(-1, os.SEEK_END)
                    needs_newline = fh.read(1) != b"\n"
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size  # kept up to date: one writer (the lock)
        except OSError as exc:
            raise write_error(self.path, exc) from None
        if needs_newline:
            self._write(b"\n")

    def _write(self, data: bytes) -> None:
        """Write ``data`` completely, or not at all (a failed write is cut back off)."""
        start = self._size
        try:
            view = memoryview(data)
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
            if self._fsync:
                os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, start)
            except OSError:  # pragma: no cover - a torn tail is still cut off on resume
                pass
            raise write_error(self.path, exc) from None
        self._size = start + len(data)

    def append(self, record: BaseModel) -> None:
        """Append one record as one line (written in full when this returns, else not at all).

        Raises
        ------
        UserError
            The file system refused the write (read-only, full, no permission): the message
            names the file; the partial line, if any, was removed.
        """
        self._write((record.model_dump_json() + "\n").encode("utf-8"))

    def fileno(self) -> int:
        """The file descriptor (for a grouped ``fsync``)."""
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.close(self._fd)
            finally:
                self._fd = -1

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
