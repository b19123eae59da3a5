"""``attune-judge score DATA --lm openai/M -o RUN --batch`` (the README's command) end to end
against the loopback fake of the files and batches endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.runner.test_ray_executor import answer, judge_items

pytestmark = pytest.mark.timeout(120)


def test_score_batch_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    data = judge_items(tmp_path / "items.jsonl", 6)
    run = tmp_path / "run"
    try:
        with FakeBatchServer(answer) as server:
            argv = ["score", str(data), "--lm", "openai/gpt-4.1-mini", "-o", str(run)]
            argv += ["--batch", "--api-base", server.base_url, "--batch-poll", "0.01", "-q"]
            with pytest.raises(SystemExit) as stop:
                main(argv)
            assert (stop.value.code or 0) == 0, capsys.readouterr().err
    finally:
        close_http_clients()
    judgments = read_jsonl(run / "judgments.jsonl", Judgment)
    assert len(judgments) == 6 and all(j.status == "ok" for j in judgments)
    batches = (run / "batch" / "batches.jsonl").read_text("utf-8").splitlines()
    assert len(batches) >= 1 and json.loads(batches[0])


@pytest.mark.slow
def test_a_sigkilled_batch_run_resumes_polling_the_same_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real SIGKILL while the command waits for its batch: the batch id is on disk, so the
    same command polls that batch to the end instead of uploading and paying again."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO_ROOT

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    data = judge_items(tmp_path / "items.jsonl", 5)
    run = tmp_path / "run"
    batches = run / "batch" / "batches.jsonl"
    try:
        with FakeBatchServer(answer, polls_to_complete=80) as server:
            argv = ["score", str(data), "--lm", "openai/gpt-4.1-mini", "-o", str(run)]
            argv += ["--batch", "--api-base", server.base_url, "--batch-poll", "0.05", "-q"]
            child = subprocess.Popen(
                [sys.executable, "-m", "attune_judge", *argv],
                env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 60
                while not (batches.exists() and server.polls >= 2):
                    assert child.poll() is None and time.monotonic() < deadline
                    time.sleep(0.02)
                child.send_signal(signal.SIGKILL)
                child.wait()
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
            (batch_id,) = server.batches
            assert server.batches[batch_id]["status"] != "completed"  # killed while waiting
            events = [json.loads(x) for x in batches.read_text("utf-8").splitlines()]
            assert [e["event"] for e in events] == ["intent", "uploaded", "submitted"]
            assert not (run / "judgments.jsonl").exists() or not (
                run / "judgments.jsonl"
            ).read_text("utf-8")
            with pytest.raises(SystemExit) as stop:
                main(argv)
            assert (stop.value.code or 0) == 0, capsys.readouterr().err
            assert len(server.uploads) == 1 and list(server.batches) == [batch_id]
            assert server.chat_calls == 0
    finally:
        close_http_clients()
    judgments = read_jsonl(run / "judgments.jsonl", Judgment)
    assert sorted(j.item_id for j in judgments) == [f"i{k}" for k in range(5)]
    assert all(j.status == "ok" for j in judgments)
