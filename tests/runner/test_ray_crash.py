"""Crash safety, the run lock and the request cache under ``--executor ray``, as with threads.

A ``score --executor ray`` command runs in a child process joined to the session's real local
Ray cluster (``ray_cluster``), against a loopback fake server answering in 0.15 s. While it runs,
a second command on the same directory is refused (the lock); the child is then SIGKILLed with
judgments on disk and actors in flight. The same command resumes: every item judged exactly
once on disk, nothing already recorded asked again, the dead holder's lock taken over. A third
run into a new directory with the same request cache sends nothing to the server: the actors
read the cache the driver's environment names.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.conftest import REPO_ROOT
from tests.runner.test_ray_executor import answer, judge_items

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

N = 80


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0), capsys.readouterr().err


def _lines_on_disk(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def test_sigkill_lock_and_cache_on_ray(
    ray_cluster: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = ray_cluster.get_runtime_context().gcs_address
    data = judge_items(tmp_path / "items.jsonl", N)
    out = tmp_path / "run"
    cache = tmp_path / "cache"
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(cache))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-driver-only")
    with FakeBatchServer(answer, latency_s=0.15) as server:
        argv = ["score", str(data), "-o", str(out), "--lm", "openai/fake-judge"]
        argv += ["--api-base", server.base_url, "--executor", "ray", "--workers", "2"]
        argv += ["--max-concurrency", "4", "--ray-address", address, "-q"]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), str(REPO_ROOT)]),
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "attune_judge", *argv],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        judgments = out / "judgments.jsonl"
        try:
            deadline = time.monotonic() + 120
            while len(_lines_on_disk(judgments)) < 8:
                assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
                assert time.monotonic() < deadline, "the Ray run recorded nothing in 120 s"
                time.sleep(0.05)
            # the lock: a second command on the same directory is refused while it runs
            code, err = _cli(argv, capsys)
            assert code == 2 and "is in use by another attune-judge process" in err
            assert f"(PID {child.pid})" in err
            child.send_signal(signal.SIGKILL)
            child.wait()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            if child.stderr is not None:
                child.stderr.close()
        before = _lines_on_disk(judgments)  # every line whole: json.loads would raise
        assert 8 <= len(before) < N
        calls_at_kill = server.chat_calls
        assert (out / ".attune.lock").exists()  # the dead holder's lock stayed behind
        # the same command resumes (and takes the dead holder's lock over)
        code, err = _cli(argv, capsys)
        assert code == 0, err
        after = read_jsonl(judgments, Judgment)
        assert sorted(j.item_id for j in after) == sorted(f"i{k}" for k in range(N))
        assert all(j.status == "ok" for j in after)
        assert [j["item_id"] for j in before] == [j.item_id for j in after[: len(before)]]
        # nothing on disk was asked again; at most the killed run's in-flight calls were lost
        assert server.chat_calls - calls_at_kill <= N - len(before)
        assert N <= server.chat_calls <= N + 4
        assert not (out / ".attune.lock").exists()
        # the actors' request cache: a new run directory, same cache, no call to the server
        calls = server.chat_calls
        fresh = ["score", str(data), "-o", str(tmp_path / "again"), *argv[4:]]
        code, err = _cli(fresh, capsys)
        assert code == 0, err
        assert server.chat_calls == calls
        again = read_jsonl(tmp_path / "again" / "judgments.jsonl", Judgment)
        scores = {j.item_id: j.scores for j in after}
        assert {j.item_id: j.scores for j in again} == scores
        close_http_clients()
