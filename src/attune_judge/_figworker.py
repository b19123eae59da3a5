"""The run commands' figure worker: matplotlib imported on the idle core (issue 47).

``score``, ``bench`` and ``sensitivity`` end with a report whose PNG figures matplotlib draws.
Importing matplotlib and the report's figure code cost the command about half a second (of
0.8-1.0 s for the whole report on a 2-core machine), while the judging before it keeps about
one core busy (the GIL). So the console script starts this worker first thing (:func:`start`):
the child imports the modules it is given (matplotlib, :mod:`attune_judge.report`) on the other
core during the run, and :func:`~attune_judge.report._style.styled` then has it draw each
figure (:func:`draw`): the command itself imports no matplotlib and draws nothing.

The worker calls the same figure function by name (the ``styled`` wrapper, which in the child
has no figure cache and no worker of its own: what an in-process call draws) with the same
arguments, ``sys.path``, environment and working directory, so the PNG bytes are the same. Any
problem (a worker that died, an error, an argument that does not pickle, no answer within
:data:`TIMEOUT_S`) returns ``None`` and the figure is drawn in-process as before: the worker
never changes or loses a figure. It exits at the end of its stdin (the command exited, was
killed, or left by ``os._exit`` on Ctrl-C); :func:`stop` kills and reaps it when the command
ends. Neither the Python API nor ``main(argv)`` (tests) starts it. POSIX only. This module
imports nothing of attune_judge (a bottom layer): the worker imports what it is told to.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["TIMEOUT_S", "draw", "serve", "start", "stop"]

TIMEOUT_S = 60.0
"""Longest wait for one figure (a first ever run builds matplotlib's font cache); then the
worker is stopped and the figure drawn in-process."""

_CHILD = (
    "import pickle, sys; sys.path[:], preload = pickle.load(sys.stdin.buffer)\n"
    "from attune_judge._figworker import serve; serve(preload)"
)
_HEADER = struct.Struct(">Q")
_worker: subprocess.Popen[bytes] | None = None


def start(preload: Sequence[str]) -> None:
    """Start the worker (once; before the command starts threads), which imports the modules
    ``preload`` names while the command runs. Never raises."""
    global _worker
    if _worker is not None or os.name != "posix" or not sys.executable:
        return
    try:  # -P: the working directory does not shadow modules; sys.path is the parent's
        _worker = subprocess.Popen(
            [sys.executable, "-P", "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            process_group=0,  # a Ctrl-C at the terminal is the command's alone
        )
        assert _worker.stdin is not None and _worker.stdout is not None
        _worker.stdin.write(pickle.dumps((list(sys.path), list(preload))))
        _worker.stdin.flush()
        for pipe in (_worker.stdin, _worker.stdout):  # _ask waits on them with a deadline
            os.set_blocking(pipe.fileno(), False)
    except Exception:
        stop()


def stop() -> None:
    """End the worker at once (killed, not waited on to finish a figure) and reap it."""
    global _worker
    worker, _worker = _worker, None
    if worker is None:
        return
    for pipe in (worker.stdin, worker.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    worker.kill()
    try:
        worker.wait(5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a SIGKILLed child always ends
        pass


def _ask(worker: subprocess.Popen[bytes], request: bytes) -> Any:
    """Send one framed request and read the framed answer (non-blocking pipes, one deadline)."""
    assert worker.stdin is not None and worker.stdout is not None
    deadline = time.monotonic() + TIMEOUT_S
    out, inp = worker.stdin.fileno(), worker.stdout.fileno()
    data, answer, size = memoryview(_HEADER.pack(len(request)) + request), bytearray(), -1
    poller = select.poll()  # not select(): a long-lived process's pipes may be above fd 1024
    poller.register(out, select.POLLOUT)
    poller.register(inp, select.POLLIN)
    while data or len(answer) != size:
        left = deadline - time.monotonic()
        ready = dict(poller.poll(max(left, 0) * 1000))
        if not ready:
            raise TimeoutError("the figure worker did not answer in time")
        if data and ready.get(out):
            data = data[os.write(out, data) :]
            if not data:
                poller.unregister(out)
        if ready.get(inp):
            chunk = os.read(inp, 1 << 20)
            if not chunk:
                raise EOFError("the figure worker ended")
            answer += chunk
            if size < 0 and len(answer) >= _HEADER.size:
                size = _HEADER.size + _HEADER.unpack_from(answer)[0]
    return pickle.loads(answer[_HEADER.size :])


def draw(fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> bytes | None:
    """The PNG ``fn(*args, **kwargs)`` (a ``styled`` figure function) drawn by the worker, or
    ``None``: no worker, or any problem (then the worker is stopped unless it only raised)."""
    worker = _worker
    if worker is None:
        return None
    try:
        request = pickle.dumps((fn.__module__, fn.__qualname__, tuple(args), dict(kwargs)), 5)
    except Exception:  # an argument that does not pickle: drawn in-process
        return None
    try:
        status, value = _ask(worker, request)
    except Exception:  # died, broken pipe, no answer in time, garbled reply
        stop()
        return None
    return value if status == "ok" and isinstance(value, bytes) else None


def serve(preload: Sequence[str]) -> None:
    """The worker's loop: import ``preload``, then draw each request until end of input.

    Requests are ``(module, qualname, args, kwargs)`` pickles framed by an 8-byte length on
    stdin; answers ``("ok", png)`` or ``("error", traceback)`` framed alike on stdout.
    """
    import importlib
    import signal
    import traceback

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the command's to handle
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to stderr, not into an answer
    inp = sys.stdin.buffer
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:  # pragma: no cover - reported by the request that needs it
            pass
    while header := inp.read(_HEADER.size):
        if len(header) < _HEADER.size:
            return
        request = inp.read(_HEADER.unpack(header)[0])
        try:
            module, qualname, args, kwargs = pickle.loads(request)
            fn: Any = importlib.import_module(module)
            for name in qualname.split("."):
                fn = getattr(fn, name)
            answer: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        except Exception:
            answer = ("error", traceback.format_exc())
        data = pickle.dumps(answer, 5)
        out.write(_HEADER.pack(len(data)) + data)
        out.flush()
