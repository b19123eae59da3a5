"""A local Ray cluster that dies with the command that started it, however the command ends.

``ray.init()`` starts a cluster whose first processes share the driver's fate, but the
processes those start (the dashboard and runtime-env agents of the raylet, ...) outlive a
SIGKILL of the driver. :func:`start_guarded_cluster` starts the cluster under a *guard*: a
small child process (``python -m attune_judge.runner._ray_guard``) that

1. becomes a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so that every process of the
   cluster, however deep and however daemonised, stays its descendant;
2. runs ``ray start --head`` on a free loopback port in a private temporary directory (no
   ``ray start`` cluster of the user's is touched, and no later command joins this one), and
   prints the cluster's address;
3. waits for its standard input to close — the command closed it (normal end, error,
   Ctrl-C), or the kernel did because the command died (SIGKILL included) — and then stops
   every descendant (SIGTERM, then SIGKILL after a grace period) and removes the directory.

Linux only (elsewhere, and when the cluster is joined rather than started, the executor uses
``ray.init`` as before).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from attune_judge.errors import UserError

__all__ = [
    "GuardedCluster",
    "guard_supported",
    "may_guard",
    "start_guarded_cluster",
    "use_local_token",
]

_PR_SET_CHILD_SUBREAPER = 36
_READY = "attune-ray-guard ready "
_GRACE_S = 5.0


def guard_supported() -> bool:
    """Whether this platform can guard a cluster (Linux with ``/proc``)."""
    return sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


def may_guard(init_kwargs: dict[str, Any]) -> bool:
    """Whether ``ray.init()`` would start a local cluster (no ``RAY_ADDRESS``, no cluster
    ``ray start`` left here), which a guard can start instead."""
    from ray._private.services import canonicalize_bootstrap_address

    start_only = {"num_cpus", "num_gpus", "resources", "labels", "object_store_memory"}
    if not guard_supported() or start_only & set(init_kwargs):
        return False
    try:
        unset: Any = None  # Ray's own annotation says str; None is what ray.init() passes
        return canonicalize_bootstrap_address(unset) is None
    except Exception:  # an unreadable address file: let ray.init decide, as before
        return False


def use_local_token() -> None:
    """Token authentication with this machine's token, which ``ray start`` enabled (Ray turns
    it on only for a cluster it finds itself, never for an address it is given)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # pragma: no cover - a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


class GuardedCluster:
    """A running guarded cluster: its ``address`` and :meth:`stop`."""

    def __init__(self, process: subprocess.Popen[str], address: str) -> None:
        self.process = process
        self.address = address

    def stop(self, timeout: float = 60.0) -> None:
        """Close the guard's input (it tears the cluster down) and wait for it."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck guard
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_guarded_cluster(timeout: float = 180.0) -> GuardedCluster:
    """Start a guarded local cluster (module docstring) and return it once it is up.

    Raises
    ------
    UserError
        The cluster did not start (the message has ``ray start``'s last output lines).
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "attune_judge.runner._ray_guard"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    for line in proc.stdout:  # the guard prints ray start's output, then the ready line
        if line.startswith(_READY):
            return GuardedCluster(proc, line[len(_READY) :].strip())
        lines.append(line.rstrip())
        if time.monotonic() > deadline:
            break
    GuardedCluster(proc, "").stop()
    tail = "; ".join(x for x in lines[-5:] if x)
    raise UserError(f"could not start a local Ray cluster: {tail or 'no output'}")


# -- the guard process -----------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    """Parent pid → child pids, of every live (non-zombie) process."""
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields and fields[0] != "Z":
            out.setdefault(int(fields[1]), []).append(int(entry))
    return out


def _descendants(pid: int) -> list[int]:
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _stop_descendants() -> None:
    me = os.getpid()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _descendants(me):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + _GRACE_S
        while time.monotonic() < deadline:
            _reap()
            if not _descendants(me):
                return
            time.sleep(0.1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _guard() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("prctl(PR_SET_CHILD_SUBREAPER) failed", flush=True)
        return 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's to handle
    signal.signal(signal.SIGTERM, lambda *_: sys.stdin.close())
    temp = tempfile.mkdtemp(prefix="attune-ray-")
    port = _free_port()
    ray_cli = [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
    args = ["start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1"]
    args += ["--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"]
    log = Path(temp) / "ray-start.log"
    try:
        with log.open("w") as out:  # a file: the cluster's daemons may keep it open
            code = subprocess.call(
                [*ray_cli, *args], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        if code != 0:
            print(log.read_text(errors="replace")[-2000:], flush=True)
            return 1
        print(f"{_READY}127.0.0.1:{port}", flush=True)
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.readline():  # until the command closes it, or dies
                pass
        return 0
    finally:
        _stop_descendants()
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(_guard())
