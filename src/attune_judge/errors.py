"""Errors a user can cause. The CLI reports them in one or two lines and exits with code 2."""

from __future__ import annotations

__all__ = ["Interrupted", "UserError"]


class UserError(Exception):
    """A problem with the user's input, configuration or environment (not a bug of ours).

    The message must say what is wrong and where (file, record, field, variable or address),
    and when possible what to do about it. ``problems`` optionally lists several problems
    (for example every bad field of every bad file) that the CLI prints one per line.
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.problems = list(problems or [])

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        return self.message + "\n" + "\n".join(f"  {p}" for p in self.problems)


class Interrupted(BaseException):
    """Ctrl-C (SIGINT) during a CLI command.

    Raised by the CLI's signal handler instead of ``KeyboardInterrupt`` so that the command
    line (not click's generic "Aborted!") reports it: the run stops at once, completed
    judgments stay on disk, and the process exits 130 without waiting for in-flight requests.
    """
