"""File-system failures on our own output as user errors: the path, the cause, what to do."""

from __future__ import annotations

import errno
from pathlib import Path

from attune_judge.errors import UserError

__all__ = ["OS_REASONS", "os_reason", "write_error"]

OS_REASONS: dict[int, str] = {
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
    errno.EFBIG: "file too large",
}
"""errno → the words used in messages."""


def os_reason(exc: OSError) -> str:
    """A short description of ``exc`` (``read-only file system``, ...)."""
    if exc.errno in OS_REASONS:
        return OS_REASONS[exc.errno]
    return exc.strerror or type(exc).__name__


def write_error(path: Path | str, exc: OSError) -> UserError:
    """``PATH: cannot write: <reason>``, with the promise that the run is resumable."""
    return UserError(
        f"{path}: cannot write: {os_reason(exc)}; nothing written is torn — fix the cause "
        "and run the same command again to resume"
    )
