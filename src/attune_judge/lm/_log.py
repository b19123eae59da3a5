"""DSPy's and LiteLLM's own console output into the run's log file, not onto the console.

DSPy logs INFO lines and tracebacks (an optimizer's failed trial, GEPA's reflections) and draws
``tqdm`` progress bars on stderr; LiteLLM prints "Give Feedback / Get Help" banners on errors.
Inside :func:`library_output_to`, the records of those libraries' loggers are written to one
file (credentials redacted, as every other output) instead of the console, and, with
``bars=True``, whatever is written to ``sys.stderr`` meanwhile (the progress bars) goes to the
same file. attune-judge's own warnings and progress lines are unaffected: they are what the
user reads.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from attune_judge._secrets import redact

__all__ = ["LIBRARY_LOGGERS", "library_output_to"]

LIBRARY_LOGGERS = ("dspy", "LiteLLM", "litellm", "LiteLLM Router", "httpx", "gepa", "optuna")
"""Loggers whose records go to the run's log inside :func:`library_output_to`."""

_depth = 0
_lock = threading.Lock()


class _Redacted(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class _RedactedStream:
    """A text stream writing redacted text to ``target`` (tqdm needs only write/flush)."""

    def __init__(self, target: TextIO) -> None:
        self._target = target

    def write(self, text: str) -> int:
        self._target.write(redact(text))
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


@contextlib.contextmanager
def library_output_to(path: Path, *, bars: bool = False) -> Iterator[Path]:
    """Send the library loggers' records (and, with ``bars``, stderr) to ``path`` (appended).

    Nested uses keep the outer one's file. LiteLLM's debug banners are turned off for good
    (``litellm.suppress_debug_info``; the error itself is recorded in the judgment).
    """
    global _depth
    with _lock:
        _depth += 1
        outer = _depth > 1
    try:
        if outer:
            yield path
            return
        _quiet_litellm()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            handler = logging.StreamHandler(fh)
            handler.setFormatter(_Redacted("%(asctime)s %(name)s %(levelname)s: %(message)s"))
            saved = []
            for name in LIBRARY_LOGGERS:
                log = logging.getLogger(name)
                saved.append((log, log.handlers[:], log.propagate))
                log.handlers = [handler]
                log.propagate = False
            stream = contextlib.redirect_stderr(_RedactedStream(fh)) if bars else None
            try:
                if stream is not None:
                    with stream:
                        yield path
                else:
                    yield path
            finally:
                for log, handlers, propagate in saved:
                    log.handlers = handlers
                    log.propagate = propagate
    finally:
        with _lock:
            _depth -= 1


def _quiet_litellm() -> None:
    if "litellm" not in sys.modules:  # not imported yet: nothing to quiet (and no slow import)
        return
    try:
        sys.modules["litellm"].suppress_debug_info = True  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - a LiteLLM without the switch
        return
