"""What a run says on stderr: the failure-budget message once, DSPy's truncation warning hidden
under ``-q``, and Ctrl-C without waiting for the summary (written by the next run)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(120)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request cache of this test's own (no answer of another test is replayed)."""
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))


def _score(url: str, out: Path, *extra: str) -> tuple[int, str]:
    argv = ["score", str(SAMPLES / "conversation_5.json"), "--lm", "openai/fake"]
    argv += ["--api-base", url, "--response-format", "json_object", "-o", str(out), *extra]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0), ""


def test_the_failure_budget_message_is_printed_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with FaultServer(choose=lambda n, text, repeat: "garbage", retry_after_s=0) as server:
        code, _ = _score(server.url, tmp_path / "run")
    err = capsys.readouterr().err
    assert code == 3, err
    # what reaches the user: stderr, and log records (on stderr outside pytest, which keeps
    # them in caplog instead)
    logged = [r.getMessage() for r in caplog.records]
    said = err.count("failure budget exceeded")
    assert said + sum("failure budget exceeded" in m for m in logged) == 1, (err, logged)
    assert "error: run stopped: failure budget exceeded" in err


@pytest.mark.parametrize("quiet", [True, False])
def test_dspy_truncation_warnings_are_hidden_under_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quiet: bool
) -> None:
    with FaultServer(choose=lambda n, text, repeat: "truncated", retry_after_s=0) as server:
        extra = ["--max-failure-rate", "1"] + (["-q"] if quiet else [])
        _score(server.url, tmp_path / "run", *extra)
    err = capsys.readouterr().err
    # the model answered with finish_reason "length": DSPy warns, never on the console (issue
    # 31: not under -q; issue 29: DSPy's own output goes to the run's log) ...
    assert "LM response was truncated" not in err, err
    log = tmp_path / "run" / "run.log"
    assert ("LM response was truncated" in log.read_text("utf-8")) is not quiet
    # ... and -q leaves the logging of later commands as it was
    import logging

    assert logging.getLogger("dspy.clients.lm").isEnabledFor(logging.WARNING)


def test_ctrl_c_does_not_compute_the_summary(tmp_path: Path) -> None:
    """An interrupt leaves at once: the summary (seconds of bootstrap on a large run) is not
    computed; the next run of the same command writes it."""
    sent = threading.Event()

    def ctrl_c_at_the_first_request(n: int, text: str, repeat: int) -> str:
        # a real SIGINT to this process while the run waits for its first answer: what
        # Ctrl-C in the terminal does (the CLI's handler turns it into an interrupt)
        if not sent.is_set():
            sent.set()
            os.kill(os.getpid(), signal.SIGINT)
        return "ok"

    out = tmp_path / "run"
    with FaultServer(choose=ctrl_c_at_the_first_request, retry_after_s=0) as server:
        code, _ = _score(server.url, out, "-q")
        # interrupted before the summary: no summary, no report
        assert code == 130 and sent.is_set()
        assert not (out / "summary.json").exists() and not (out / "report.md").exists()
        assert (out / "judgments.jsonl").exists()  # the run itself was under way
        code, _ = _score(server.url, out, "-q")
    assert code == 0
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    assert summary["run"]["complete"] is True
