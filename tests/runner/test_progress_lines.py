"""Progress without a terminal, and the libraries' own output kept off the console (issue 29).

Under CI, ``nohup`` or a log file (stderr is no terminal) a run prints a plain line on stderr
every ``ATTUNE_PROGRESS_INTERVAL`` seconds: done / total, ok / failed, rate, time left. DSPy's
and LiteLLM's log records (and, in ``align``, their progress bars) go to the run's log file.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.lm import LMSettings, library_output_to, resolve_lm
from tests._openai_stub import openai_stub
from tests.conftest import REPO_ROOT
from tests.judging._stub_judges import requested_fields

LINE = re.compile(
    r"^judging: (\d+)/(\d+) done \((\d+) ok, (\d+) failed\), \d+\.\d\d/s, "
    r"(about .+ left|time left unknown)$"
)


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _six_items(tmp_path: Path) -> Path:
    items = tmp_path / "items.jsonl"
    lines = (REPO_ROOT / "data" / "duo" / "items.jsonl").read_text("utf-8").splitlines(True)
    items.write_text("".join(lines[:6]), "utf-8")
    return items


def _reply(body: dict[str, Any]) -> str:
    return json.dumps({n: "ok" if n == "rationale" else 3 for n in requested_fields(body)})


def _score(tmp_path: Path, server_url: str, out: str, *extra: str) -> int:
    argv = ["score", str(_six_items(tmp_path)), "--rubric", "duo-dialogue", "--no-reference"]
    argv += ["--lm", "openai/stub", "--api-base", server_url, "--max-concurrency", "1"]
    return _cli([*argv, "-o", str(tmp_path / out), *extra])


def test_score_without_a_terminal_prints_plain_progress_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTUNE_PROGRESS_INTERVAL", "0.25")
    with openai_stub(_reply) as server:
        server.delay_s = 0.2  # six judgments one after another: about 1.2 s
        assert _score(tmp_path, server.url, "run") == 0
    err = capsys.readouterr().err
    found = [LINE.match(line) for line in err.splitlines()]
    progress = [m for m in found if m]
    assert len(progress) >= 3, err  # a steady interval, not only at the end
    done = [int(m.group(1)) for m in progress]
    assert done == sorted(done) and done[-1] == 6  # the last line: where the run ended
    assert all(int(m.group(2)) == 6 for m in progress)
    last = progress[-1]
    assert (int(last.group(3)), int(last.group(4))) == (6, 0)
    assert (tmp_path / "run" / "run.log").is_file()


def test_a_short_run_and_quiet_print_no_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with openai_stub(_reply) as server:
        # shorter than the default interval: no line at all, not even the last one
        assert _score(tmp_path, server.url, "short") == 0
        short = capsys.readouterr().err
        # -q: none, however long the run against the interval
        monkeypatch.setenv("ATTUNE_PROGRESS_INTERVAL", "0.25")
        monkeypatch.setenv("ATTUNE_CACHE", "0")  # the same six requests: asked again
        server.delay_s = 0.2
        assert _score(tmp_path, server.url, "quiet", "-q") == 0
        assert len(server.requests) == 12
        quiet = capsys.readouterr().err
    assert not any(line.startswith("judging:") for line in short.splitlines()), short
    assert not any(line.startswith("judging:") for line in quiet.splitlines()), quiet


def test_library_output_goes_to_the_log_not_the_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTUNE_TEST_SECRET_KEY", "sk-very-secret-value")
    # a model at an address with a password: resolving it registers the address's secrets
    settings = LMSettings(lm="openai/x", api_base="http://u:hunter22hunter@127.0.0.1:9/v1")
    resolve_lm(settings, check_connection=False)
    log = tmp_path / "run.log"
    dspy_log = logging.getLogger("dspy.teleprompt.gepa")
    handlers = logging.getLogger("dspy").handlers[:]
    with library_output_to(log, bars=True):
        dspy_log.warning(
            "GEPA trial failed: Traceback ... at http://u:hunter22hunter@127.0.0.1:9/v1"
        )
        logging.getLogger("LiteLLM").warning("Give Feedback / Get Help")
        sys.stderr.write("Average Metric: 3 / 4 (75.0%): 100%|██████| 4/4\n")
        logging.getLogger("attune_judge.x").warning("our own warning stays on the console")
    captured = capsys.readouterr()
    assert "GEPA" not in captured.err and "Average Metric" not in captured.err
    assert "Give Feedback" not in captured.out + captured.err
    text = log.read_text("utf-8")
    assert "GEPA trial failed" in text and "Average Metric: 3 / 4" in text
    assert "Give Feedback" in text
    assert "hunter22hunter" not in text and "u:***@127.0.0.1" in text
    assert logging.getLogger("dspy").handlers == handlers  # restored afterwards
