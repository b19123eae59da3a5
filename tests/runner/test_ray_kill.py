"""A Ray cluster that a command starts dies with the command, a SIGKILL included (issue 30,
point 5).

``score --executor ray`` runs in a child process with no cluster to join (``RAY_ADDRESS``
unset, a private ``RAY_TMPDIR`` without a ``ray start`` address file), so it starts its own
local cluster — the real local Ray. Once judgments reach the disk, the test takes every
descendant of the command (GCS, raylet, agents, workers, ...), SIGKILLs the command alone and
finds none of them alive 10 s later.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.conftest import REPO_ROOT
from tests.runner.test_ray_executor import answer, judge_items

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]


def _tree() -> dict[int, tuple[int, str, str]]:
    """pid → (parent pid, state, command line) of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        out[int(entry)] = (int(fields[1]), fields[0], cmd)
    return out


def _descendants(pid: int) -> dict[int, str]:
    tree = _tree()
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _, cmd) in tree.items():
            if ppid == parent and child not in out:
                out[child] = cmd
                todo.append(child)
    return out


def _alive(pids: set[int]) -> dict[int, str]:
    tree = _tree()
    return {p: tree[p][2] for p in pids if p in tree and tree[p][1] != "Z"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard needs Linux")
def test_sigkill_of_the_command_leaves_no_ray_process(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    data = judge_items(tmp_path / "items.jsonl", 200)
    out = tmp_path / "run"
    ray_tmp = tempfile.mkdtemp(prefix="rt-")  # no `ray start` cluster to join in here
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)]),
        "RAY_TMPDIR": ray_tmp,
        "ATTUNE_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "sk-test-only",
    }
    env.pop("RAY_ADDRESS", None)
    with FakeBatchServer(answer, latency_s=0.2) as server:
        argv = ["score", str(data), "-o", str(out), "--lm", "openai/fake-judge"]
        argv += ["--api-base", server.base_url, "--executor", "ray", "--workers", "1"]
        child = subprocess.Popen(
            [sys.executable, "-m", "attune_judge", *argv, "--max-concurrency", "2", "-q"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 180
            judgments = out / "judgments.jsonl"
            while not judgments.exists() or judgments.read_text("utf-8").count("\n") < 3:
                assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
                assert time.monotonic() < deadline, "the Ray run recorded nothing in 180 s"
                time.sleep(0.1)
            started = _descendants(child.pid)
            names = " ".join(started.values())
            # the command started a cluster of its own: its GCS, raylet and agents
            assert "gcs_server" in names and "raylet" in names, names
            assert "agent" in names, names
            child.send_signal(signal.SIGKILL)
            child.wait()
            killed = time.monotonic()
            left = _alive(set(started))
            while left and time.monotonic() - killed < 10:
                time.sleep(0.2)
                left = _alive(set(started))
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            if child.stderr is not None:
                child.stderr.close()
            close_http_clients()
            shutil.rmtree(ray_tmp, ignore_errors=True)
    assert left == {}, f"{len(left)} Ray process(es) still alive 10 s after the kill: {left}"
    assert 3 <= len(Path(out / "judgments.jsonl").read_text("utf-8").splitlines()) < 200
