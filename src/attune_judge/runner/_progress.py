"""Progress display: a rich bar on a terminal; without one (CI, ``nohup``, a log file) a plain
line on stderr at a steady interval — done / total, ok / failed, rate, time left — so a long
run is never silent. The interval is ``ATTUNE_PROGRESS_INTERVAL`` seconds (default 30); a run
shorter than one interval prints nothing.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import Any, TextIO

from attune_judge.errors import UserError
from attune_judge.lm import read_env

__all__ = ["DEFAULT_PROGRESS_INTERVAL_S", "Progress", "make_progress", "progress_line"]

DEFAULT_PROGRESS_INTERVAL_S = 30.0
"""Seconds between plain progress lines (``ATTUNE_PROGRESS_INTERVAL``)."""


class Progress:
    """Counts finished tasks; the base class displays nothing (quiet mode, pipes, tests)."""

    def __init__(self, total: int, description: str = "judging") -> None:
        self.total = total
        self.description = description
        self.done = 0
        self.failed = 0

    def advance(self, *, failed: bool = False) -> None:
        """One more task finished (``failed``: with a non-ok status)."""
        self.done += 1
        self.failed += int(failed)

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the display (the context's exit)."""


class _RichProgress(Progress):
    def __init__(self, total: int, description: str) -> None:
        super().__init__(total, description)
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichBar

        self._bar = RichBar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("failed: {task.fields[failed]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task: Any = None

    def _rate(self) -> str:
        if self._task is None:
            return ""
        speed = self._bar.tasks[0].speed
        return f"{speed:.1f}/s" if speed else "…/s"

    def advance(self, *, failed: bool = False) -> None:
        super().advance(failed=failed)
        self._bar.update(self._task, advance=1, failed=self.failed, rate=self._rate())

    def __enter__(self) -> Progress:
        self._bar.start()
        self._task = self._bar.add_task(self.description, total=self.total, failed=0, rate="")
        return self

    def close(self) -> None:
        self._bar.stop()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def progress_line(description: str, done: int, total: int, failed: int, elapsed_s: float) -> str:
    """One plain progress line.

    >>> progress_line("judging", 30, 120, 2, 60.0)
    'judging: 30/120 done (28 ok, 2 failed), 0.50/s, about 3 min 00 s left'
    >>> progress_line("judging", 0, 10, 0, 5.0)
    'judging: 0/10 done (0 ok, 0 failed), 0.00/s, time left unknown'
    """
    rate = done / elapsed_s if elapsed_s > 0 else 0.0
    left = f"about {_duration((total - done) / rate)} left" if rate > 0 else "time left unknown"
    return (
        f"{description}: {done}/{total} done ({done - failed} ok, {failed} failed), "
        f"{rate:.2f}/s, {left}"
    )


class _LineProgress(Progress):
    """Plain lines on a stream every ``interval_s`` seconds (from a timer thread, so a line
    comes even while one slow judgment runs), and a last line at the end if any was written."""

    def __init__(
        self, total: int, description: str, interval_s: float, stream: TextIO | None = None
    ) -> None:
        super().__init__(total, description)
        self.interval_s = interval_s
        self.stream = stream
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._started = 0.0
        self.lines = 0

    def advance(self, *, failed: bool = False) -> None:
        with self._lock:
            super().advance(failed=failed)

    def _write(self) -> None:
        with self._lock:
            line = progress_line(
                self.description,
                self.done,
                self.total,
                self.failed,
                time.monotonic() - self._started,
            )
        stream = self.stream or sys.stderr
        try:
            print(line, file=stream, flush=True)
        except (OSError, ValueError):  # a closed stream never breaks a run
            return
        self.lines += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._write()

    def __enter__(self) -> Progress:
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="attune-progress", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.lines:  # the run was long enough to report: say where it ended
            self._write()


def _interval() -> float:
    raw = read_env("ATTUNE_PROGRESS_INTERVAL")
    try:
        value = float(raw) if raw is not None else DEFAULT_PROGRESS_INTERVAL_S
    except ValueError:
        raise UserError(
            f"environment variable ATTUNE_PROGRESS_INTERVAL: expected seconds, got {raw!r}"
        ) from None
    return value if value > 0 else DEFAULT_PROGRESS_INTERVAL_S


def make_progress(total: int, *, quiet: bool, description: str = "judging") -> Progress:
    """A rich progress bar on a terminal's stderr; without a terminal, plain lines every
    ``ATTUNE_PROGRESS_INTERVAL`` seconds; a silent counter when ``quiet``."""
    if quiet:
        return Progress(total, description)
    if not sys.stderr.isatty():
        return _LineProgress(total, description, _interval())
    return _RichProgress(total, description)
