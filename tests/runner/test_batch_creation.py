"""Batch creation is paid for once: a run killed at any step of creating its batch, or a
creation call that timed out, resumes by adopting the batch the provider already made."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from attune_judge.runner import run_score
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.runner.test_batch import N, _config, _lines
from tests.runner.test_ray_executor import answer, judge_items

pytestmark = pytest.mark.timeout(400)

# every step of creating a batch: (HTTP method, path suffix, killed before the request was
# sent / after the provider acted on it and before its answer arrived)
STEPS = [
    ("POST", "/files", "before"),
    ("POST", "/files", "after"),
    ("POST", "/batches", "before"),
    ("POST", "/batches", "after"),
    ("GET", "/batches/", "before"),  # the first poll: the batch id is recorded by then
]


def _paid(server: FakeBatchServer) -> Counter[str]:
    """How many times each request was put into a batch the provider created (and bills)."""
    return Counter(line["custom_id"] for b in server.batches.values() for line in b["_lines"])


def _hit(step: tuple[str, str, str], method: str, path: str) -> bool:
    m, p, _ = step
    return m == method and (path.endswith(p) or (p.endswith("/") and p in path))


@pytest.mark.parametrize("step", STEPS, ids=lambda s: " ".join(s))
def test_a_run_killed_at_any_step_of_creation_pays_each_request_once(
    tmp_path: Path, step: tuple[str, str, str]
) -> None:
    data = judge_items(tmp_path / "items.jsonl", N)
    armed = {"left": 1}

    def ctrl_c(method: str, path: str, stage: str) -> None:
        # Ctrl-C (a real SIGINT, to the command's main thread, as a terminal's lands) at the
        # step: before the request took effect (it is dropped) or after the provider acted,
        # its answer lost
        if not armed["left"] or not _hit(step, method, path):
            return
        if stage == ("received" if step[2] == "before" else "handled"):
            armed["left"] = 0
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
            raise ConnectionAbortedError("the client was interrupted")

    # Python's own Ctrl-C handler, whatever an earlier test of this process left installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with FakeBatchServer(answer, polls_to_complete=3, on_request=ctrl_c) as server:
            with pytest.raises(KeyboardInterrupt):
                run_score(_config(data, tmp_path / "r", server))
            assert not armed["left"]
            result = run_score(_config(data, tmp_path / "r", server))
            close_http_clients()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.n_by_status == {"ok": N}
    assert len(server.batches) == 1
    paid = _paid(server)
    assert len(paid) == N and set(paid.values()) == {1}
    assert server.chat_calls == 0
    assert not list((tmp_path / "r" / "batch").glob("intent-*.jsonl"))  # dropped once submitted


def test_a_creation_call_whose_answer_is_lost_adopts_the_batch_it_made(tmp_path: Path) -> None:
    """The provider creates the batch but its answer never arrives (a timeout, a dropped
    connection): retrying the call blindly would create (and bill) a second batch."""
    data = judge_items(tmp_path / "items.jsonl", N)
    lost = {"left": 1}

    def drop(method: str, path: str, stage: str) -> None:
        if (method, stage) == ("POST", "handled") and path.endswith("/batches"):
            if lost["left"]:
                lost["left"] -= 1
                raise ConnectionAbortedError("the answer is lost")

    with FakeBatchServer(answer, polls_to_complete=3, on_request=drop) as server:
        result = run_score(_config(data, tmp_path / "t", server))
        close_http_clients()
    assert not lost["left"]
    assert result.n_by_status == {"ok": N}
    assert len(server.batches) == 1 and set(_paid(server).values()) == {1}


@pytest.mark.slow
def test_sigkilled_at_every_step_of_creation_in_turn_pays_each_request_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real command, killed with SIGKILL by the server at each step of creation in turn
    (each run resuming what the one before left), then run to the end: one batch."""
    from attune_judge.cli import main
    from tests.conftest import REPO_ROOT

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    data = judge_items(tmp_path / "items.jsonl", 6)
    run = tmp_path / "run"
    child: dict[str, Any] = {}
    kills: list[tuple[str, str, str]] = []

    def killer(method: str, path: str, stage: str) -> None:
        step = child.get("step")
        if step is None or child.get("done"):
            return
        if _hit(step, method, path) and stage == ("received" if step[2] == "before" else "handled"):
            child["done"] = True
            kills.append(step)
            os.kill(child["proc"].pid, signal.SIGKILL)
            child["proc"].wait()
            if stage == "received":  # died before its request took effect: drop it
                raise ConnectionAbortedError("the client was killed")

    try:
        with FakeBatchServer(answer, polls_to_complete=3, on_request=killer) as server:
            argv = ["score", str(data), "--lm", "openai/gpt-4.1-mini", "-o", str(run)]
            argv += ["--batch", "--api-base", server.base_url, "--batch-poll", "0.05", "-q"]
            for step in STEPS:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "attune_judge", *argv],
                    env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                child.update(step=step, proc=proc, done=False)
                try:
                    assert proc.wait(timeout=90) == -signal.SIGKILL, (step, kills)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
            child["step"] = None
            assert kills == STEPS
            with pytest.raises(SystemExit) as stop:
                main(argv)
            assert (stop.value.code or 0) == 0, capsys.readouterr().err
    finally:
        close_http_clients()
    judgments = _lines(run)
    assert sorted(j.item_id for j in judgments) == [f"i{k}" for k in range(6)]
    assert all(j.status == "ok" for j in judgments)
    assert len(server.batches) == 1 and set(_paid(server).values()) == {1}
    assert len(_paid(server)) == 6
    events = [json.loads(x) for x in (run / "batch" / "batches.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["intent", "uploaded", "submitted", "finished"]
