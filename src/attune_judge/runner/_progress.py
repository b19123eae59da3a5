"""Progress display: a rich bar with rate, ETA and failure count, silent when not a terminal."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

__all__ = ["Progress", "make_progress"]


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
        return None


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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._bar.stop()


def make_progress(total: int, *, quiet: bool, description: str = "judging") -> Progress:
    """A rich progress bar on stderr, or a silent counter when quiet or stderr is no terminal."""
    if quiet or not sys.stderr.isatty():
        return Progress(total, description)
    return _RichProgress(total, description)
