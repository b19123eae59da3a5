"""Atomic, redacted writes of a run directory's files (no statistics imported: the runner
uses them from its first line)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from attune_judge._secrets import redact
from attune_judge.data import write_error

__all__ = ["write_json", "write_text"]


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (temporary file, then rename) with secret values redacted.

    Raises
    ------
    UserError
        The file system refused (read-only, full, no permission); the temporary file is
        removed and the previous version of ``path`` is left as it was.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(redact(text), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise write_error(path, exc) from None


def write_json(path: Path, obj: Any) -> None:
    """Write a JSON object atomically, redacted (see :func:`write_text`)."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")
