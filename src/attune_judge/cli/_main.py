"""Entry point: builds the typer app from one module per area and maps user errors to exit 2.

Each area module (``_data``, ``_judge``, ...) exposes ``register(app)`` and keeps its heavy
imports inside the command functions, so ``attune-judge --help`` stays fast.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import typer
from typer.models import DefaultPlaceholder

from attune_judge import _figworker
from attune_judge._secrets import redact
from attune_judge._version import __version__
from attune_judge.cli import (
    _align,
    _annotate,
    _bench,
    _calibrate,
    _data,
    _demo,
    _export,
    _judge,
    _report,
    _rubric,
    _schema,
    _score,
    _sensitivity,
    _view,
)
from attune_judge.errors import Interrupted, UserError

__all__ = ["app", "main"]

_SETTINGS: dict[str, Any] = {
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,  # plain help: importing rich for it tripled `--help`'s time
}
app = typer.Typer(
    name="attune-judge",
    help="Score chatbot responses with LLM judges and measure how far the judges can be trusted.",
    **_SETTINGS,
)


@app.callback()
def _root() -> None:
    """Score chatbot responses with LLM judges and measure how far the judges can be trusted."""


@app.command("version")
def version() -> None:
    """Print the attune-judge version."""
    print(__version__)


_MODULES = (
    _data,
    _judge,
    _score,
    _calibrate,
    _report,
    _bench,
    _sensitivity,
    _demo,
    _rubric,
    _export,
    _schema,
    _align,
    _annotate,
    _view,
)
for _module in _MODULES:
    _module.register(app)


_PATH_PROBLEMS: tuple[tuple[type[OSError], str], ...] = (
    (FileNotFoundError, "no such file or folder"),
    (FileExistsError, "exists and is not a folder; choose another output path"),
    (NotADirectoryError, "a part of this path is a file, not a folder"),
    (IsADirectoryError, "is a folder; expected a file"),
    (PermissionError, "permission denied"),
)
"""File-system errors about a path the user gave, with the sentence that explains them."""


def path_error_message(exc: OSError) -> str | None:
    """``"PATH: what is wrong"`` for a file-system error that names a path, else ``None``.

    For a rename (``a.tmp -> a``) the target is named, since that is the user's path.
    """
    for kind, text in _PATH_PROBLEMS:
        if isinstance(exc, kind) and exc.filename is not None:
            path = exc.filename2 if exc.filename2 is not None else exc.filename
            if kind is FileExistsError and Path(path).is_dir():
                text = "already exists; choose another output path"
            return f"{path}: {text}"
    if exc.filename is not None:  # read-only file system, disk full, quota, I/O error, ...
        from attune_judge.data import os_reason

        path = exc.filename2 if exc.filename2 is not None else exc.filename
        return f"{path}: {os_reason(exc)}"
    return None


def _decode_error_message(exc: UnicodeDecodeError) -> str:
    """``PATH: not UTF-8 text (line N ...)`` for a decode error, the path found in the frames
    that raised it (a reader without its own check)."""
    from attune_judge.data import not_utf8_error

    tb = exc.__traceback__
    candidates: list[Path] = []
    while tb is not None:
        for name in ("path", "file", "f", "source", "src"):
            value = tb.tb_frame.f_locals.get(name)
            if isinstance(value, str | Path) and Path(value).is_file():
                candidates.append(Path(value))
        tb = tb.tb_next
    if candidates:
        return str(not_utf8_error(candidates[-1]))
    return f"an input file is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"


def _app_for(args: list[str]) -> tuple[typer.Typer, list[str], str]:
    """The app to run for ``args``, the arguments it takes and its program name.

    Typer builds every command's parameters (type hints, pydantic adapters) before it reads
    the arguments, and a group's own ``--help`` flag costs a pydantic adapter. So a command
    named first (``validate``), or a group's command (``data convert``), runs alone as a
    one-command app; a group named alone (or ``annotate``, whose default command is
    ``serve``) runs under a root pruned to it. Anything else (no command, an option, a typo)
    gets the whole app, so its help and suggestions list every command.
    """
    name = args[0] if args else ""
    commands = [c for c in app.registered_commands if c.name == name]
    rest = args[1:]
    for group in app.registered_groups:
        sub = group.typer_instance
        plain = isinstance(sub.info.cls, DefaultPlaceholder | None) if sub else False
        if sub is not None and group.name == name and plain and rest:  # annotate: own class
            commands = [c for c in sub.registered_commands if c.name == rest[0]]
            name, rest = f"{name} {rest[0]}", rest[1:]
    if commands:
        single = typer.Typer(**_SETTINGS)
        single.registered_commands = commands
        return single, rest, f"attune-judge {name}"
    groups = [g for g in app.registered_groups if g.name == args[0]] if args else []
    if groups:
        pruned = typer.Typer(name=app.info.name, help=app.info.help, **_SETTINGS)
        pruned.registered_callback = app.registered_callback
        pruned.registered_groups = groups
        return pruned, args, "attune-judge"
    return app, args, "attune-judge"


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise Interrupted()


def _exit_now(code: int) -> None:
    """Exit without the interpreter's shutdown, after what of it matters here: flushing the
    output, the figure worker and multiprocessing's exit finalizers (they unlink the named
    semaphores of the process executor's queues, which the resource tracker would otherwise
    report as leaked)."""
    sys.stdout.flush()
    sys.stderr.flush()
    _figworker.stop()
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util._run_finalizers(0)  # what a normal exit runs first (Python's own atexit hook)
    os._exit(code)


_FIGURE_CODE = ("matplotlib.figure", "matplotlib.backends.backend_agg", "attune_judge.report")
"""What drawing the report's figures imports (issue 47: the figure worker's preload)."""


def _writes_a_report(args: list[str]) -> bool:
    """Whether ``args`` run a command that ends with a report's figures (issue 47: the
    console script starts :mod:`attune_judge._figworker` for these, not for ``main(argv)``)."""
    if not args or args[0] not in ("score", "bench", "sensitivity"):
        return False
    return not {"--help", "--no-report"} & set(args)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a ``UserError`` becomes a short message on stderr and exit code 2.

    So does a file-system error on a path (output path under a file, a folder where a file is
    expected, no permission, a read-only file system, a full disk): the message names the path.
    Ctrl-C stops the command at once (exit 130): completed judgments are on disk, requests in
    flight are abandoned, and the message says how to resume.
    """
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, _raise_interrupted)
    try:
        if argv is None and _writes_a_report(sys.argv[1:]):
            _figworker.start(_FIGURE_CODE)  # imported on the idle core while the command judges
        chosen, args, prog = _app_for(list(sys.argv[1:] if argv is None else argv))
        chosen(args=args, prog_name=prog)
    except UserError as exc:
        print(f"error: {redact(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as exc:
        message = path_error_message(exc)
        if message is None:
            raise
        print(f"error: {redact(message)}", file=sys.stderr)
        raise SystemExit(2) from None
    except UnicodeDecodeError as exc:
        print(f"error: {_decode_error_message(exc)}", file=sys.stderr)
        raise SystemExit(2) from None
    except (KeyboardInterrupt, Interrupted):
        print(
            "interrupted: stopped; completed judgments are kept, requests in flight were "
            "abandoned; run the same command again to resume",
            file=sys.stderr,
        )
        if argv is None:
            # the console script exits at once: no wait for abandoned requests (up to --timeout
            # each), nor for the interpreter's teardown of DSPy, LiteLLM and the rest (seconds
            # on a loaded machine; the run directory is closed and synced by now)
            _exit_now(130)
        raise SystemExit(130) from None
    finally:
        _figworker.stop()
        logging.disable(logging.NOTSET)  # -q of this command (setup_logging) ends with it
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
