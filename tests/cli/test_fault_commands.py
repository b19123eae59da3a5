"""Commands against the fault-injecting server: the runner is the only retry layer.

Each command is run in-process through ``main(argv)`` against a FaultServer that fails every
request with HTTP 500 (retryable). With ``--max-retries R`` every unit must cost exactly
``R + 1`` requests — DSPy, LiteLLM and the OpenAI SDK add none of their own.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.conftest import SAMPLES
from tests.judges.sample_items import sample_items

pytestmark = pytest.mark.timeout(120)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _always(fault: str) -> FaultServer:
    return FaultServer(choose=lambda n, text, repeat: fault, retry_after_s=0)


def test_judge_sends_exactly_one_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (item,), _, _ = sample_items(1)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), "utf-8")
    with _always("server_error") as server:
        argv = ["judge", str(path), "--lm", "openai/fake", "--api-base", server.url, "--no-cache"]
        assert _cli([*argv, "--response-format", "json_object"]) == 3  # a failed judgment
        assert server.requests == 1
    assert json.loads(capsys.readouterr().out)["status"] == "lm_error"


@pytest.mark.parametrize("fmt", ["json_object", "json_schema"])
def test_score_requests_equal_attempts(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "run"
    with _always("server_error") as server:
        code = _cli(
            [
                "score",
                str(SAMPLES / "conversation_5.json"),
                "--lm",
                "openai/fake",
                "--api-base",
                server.url,
                "--response-format",
                fmt,
                "--max-retries",
                "2",
                "--max-failure-rate",
                "1",
                "-o",
                str(out),
                "-q",
            ]
        )
        sent = server.requests
    judgments = read_jsonl(out / "judgments.jsonl", Judgment)
    asked = [j for j in judgments if j.status != "refused"]
    assert asked and all(j.status == "lm_error" for j in asked)
    assert all(j.details["attempts"] == 3 and j.details["requests"] == 3 for j in asked)
    assert sent == 3 * len(asked)
    assert code == 3  # no judgment is ok: the run is not complete


def test_generate_requests_equal_attempts(tmp_path: Path) -> None:
    out = tmp_path / "cands.jsonl"
    with _always("server_error") as server:
        code = _cli(
            [
                "generate",
                str(SAMPLES / "conversation_5.json"),
                "--lm",
                "openai/fake",
                "--api-base",
                server.url,
                "--response-format",
                "json_object",
                "--max-retries",
                "1",
                "-o",
                str(out),
                "-q",
            ]
        )
        sent = server.requests
    assert code != 0
    assert not out.exists() or out.read_text("utf-8") == ""
    turns = sent // 2
    assert turns > 0 and sent == 2 * turns  # 1 + 1 retry per turn, nothing hidden


def test_generate_never_writes_a_faulty_answer(tmp_path: Path) -> None:
    out = tmp_path / "cands.jsonl"
    for fault in ("truncated", "two_objects", "garbage"):
        with _always(fault) as server:
            argv = ["generate", str(SAMPLES / "conversation_5.json"), "--lm", "openai/fake"]
            argv += ["--api-base", server.url, "--response-format", "json_object"]
            code = _cli([*argv, "--parse-retries", "0", "-o", str(out), "-q"])
            assert code != 0 and server.requests > 0
        assert not out.exists() or out.read_text("utf-8") == ""


@pytest.mark.slow
@pytest.mark.timeout(400)  # two cold starts of the command on a loaded machine
def test_ctrl_c_stops_at_once_and_says_so(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO_ROOT

    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    with FaultServer(choose=lambda n, text, repeat: "hang", hang_s=60) as server:
        argv = [sys.executable, "-m", "attune_judge", "score", str(SAMPLES), "--lm", "openai/fake"]
        argv += ["--api-base", server.url, "--response-format", "json_object", "--timeout", "100"]
        proc = subprocess.Popen(
            [*argv, "-o", str(out), "-q"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while server.requests < 3:  # requests are in flight (and will hang for 60 s)
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        # the requests hang for 60 s: a process that waited for them fails this 30 s wait
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted" in err.decode() and "Traceback" not in err.decode()
    # no summary computed (test_run_messages counts the calls in-process): the next run writes it
    assert not (out / "summary.json").exists()
    assert not list(out.glob("*.tmp"))
    # the same server address (the address is part of the judge: another one is another run)
    port = int(argv[argv.index("--api-base") + 1].rsplit(":", 1)[1].split("/")[0])
    with FaultServer(choose=lambda n, text, repeat: "ok", retry_after_s=0, port=port):
        proc = subprocess.run([*argv, "-o", str(out), "-q"], env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["run"]["complete"] is True


def test_ctrl_c_exits_the_console_script_at_once_without_threads_left(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # with the process executor the parent has no thread left once its workers are
    # terminated; the console script used to fall back to a normal exit then, whose teardown
    # of DSPy, LiteLLM and the rest took 1-2 s on a loaded machine
    import multiprocessing.util
    import os

    import attune_judge.runner
    from attune_judge.errors import Interrupted

    def interrupted(*_: object, **__: object) -> None:
        raise Interrupted()

    exits: list[int] = []

    def exit_now(code: int) -> None:
        exits.append(code)
        raise SystemExit(code)  # stands in for os._exit, which would end pytest

    finalized: list[int] = []
    # Ctrl-C while `generate` runs (its library call interrupted, as the SIGINT handler does)
    monkeypatch.setattr(attune_judge.runner, "run_generate", interrupted)
    monkeypatch.setattr(os, "_exit", exit_now)
    argv = ["attune-judge", "generate", str(tmp_path / "data.jsonl"), "-o", str(tmp_path / "c")]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # the workers are gone
    # the queues' named semaphores are unlinked first (else the resource tracker reports them
    # as leaked); recorded here, not run: pytest's own process has other users of them
    monkeypatch.setattr(multiprocessing.util, "_run_finalizers", finalized.append)
    with pytest.raises(SystemExit):
        main()
    assert exits == [130]
    assert finalized == [0]
    assert "interrupted: stopped" in capsys.readouterr().err


def _first_fails(n: int, text: str, repeat: int) -> str:
    return "server_error" if repeat == 0 else "ok"


@pytest.mark.parametrize("command", ["sensitivity", "validate"])
def test_study_commands_send_exactly_the_attempts_they_record(tmp_path: Path, command: str) -> None:
    """Every first request fails (HTTP 500), its retry succeeds: each judgment is exactly 2
    requests, and the server saw exactly what the run directory records."""
    out = tmp_path / "run"
    with FaultServer(choose=_first_fails, retry_after_s=0) as server:
        argv = ["--lm", "openai/fake", "--api-base", server.url, "--response-format", "json_object"]
        if command == "sensitivity":
            variants = tmp_path / "variants.yaml"
            variants.write_text(
                "name: t\nbase:\n  rubric: attunebench-reference\nperturbations:\n"
                "  - name: shuffled\n    kind: shuffle_criteria\n    seed: 1\n",
                "utf-8",
            )
            argv = [
                "sensitivity",
                str(SAMPLES / "conversation_5.json"),
                "--variants",
                str(variants),
                *argv,
                "-q",
            ]
            run = out
        else:
            argv = ["validate", "--set", "duo", "--limit", "6", *argv]
            run = out / "run"
        code = _cli([*argv, "-B", "100", "-o", str(out)])
        sent = server.requests
    judgments = read_jsonl(run / "judgments.jsonl", Judgment)
    assert code == 0 and judgments and all(j.status == "ok" for j in judgments)
    assert all(j.details["attempts"] == 2 and j.details["requests"] == 2 for j in judgments)
    assert sent == 2 * len(judgments)
