"""One accounting rule for every judge shape: the requests the judgments record, retries
included, sum to what the server received (issue 30, point 2; issue 31, point 4).

Each command runs in-process against the fault-injecting loopback server, which answers the
first two tries of a request with HTTP 429 (``Retry-After: 0``), HTTP 500 or a hang past
``--timeout`` (by arrival number) and then answers properly. The server's own count is the
independent record: ``sum(details["requests"])`` over what the run wrote must equal it, for
one-call, per-criterion, expected-score, checklist, jury and pairwise judges, bench units and
align's held-out judgments.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.runner import RetryPolicy
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.align._engine import write_labels
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

HANGS = {4, 13}
"""Arrival numbers that hang (past the 1 s timeout)."""


def _plan(n: int, text: str, repeat: int) -> str:
    if repeat >= 2:  # every request is answered by its third try
        return "ok"
    if n in HANGS:
        return "hang"
    return ("rate_limit", "ok", "ok", "server_error", "ok", "ok")[n % 6]


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No backoff sleeps (the waits are not what is tested) and a request cache of its own."""
    monkeypatch.setattr(RetryPolicy, "delay", lambda self, retry: 0.0)
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))


def _model(url: str, *lms: str) -> list[str]:
    out = [x for lm in lms or ("openai/fake",) for x in ("--lm", lm)]
    return [*out, "--api-base", url, "--response-format", "json_object", "--timeout", "1"]


SCORE = ["score", str(SAMPLES), "--models", "original", "-B", "50", "-q", "--max-retries", "20"]

SHAPES: dict[str, list[str]] = {
    "one call": [],
    "per criterion": ["--per-criterion"],
    "expected score": ["--score-mode", "expected"],
    "checklist": ["--rubric", "attunebench-checklist"],
    "jury": ["--jury", "mean"],
    "pairwise": ["--rubric", "attunebench-pairwise"],
}


def _recorded(*files: Path) -> tuple[int, int]:
    """(sum of ``details.requests``, judgments) over JSONL files of judgments."""
    total = n = 0
    for path in files:
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                total += int(record["details"].get("requests", 0))
                n += 1
    return total, n


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _check(server: FaultServer, recorded: int, judged: int) -> None:
    deadline = time.monotonic() + 30  # a request the client gave up on may register late
    while server.requests < recorded and time.monotonic() < deadline:
        time.sleep(0.05)
    faults = server.faults()
    assert judged > 0
    assert faults["rate_limit"] > 0 and faults["server_error"] > 0 and faults["hang"] > 0, faults
    assert recorded == server.requests, (recorded, dict(faults))
    print(f"{judged} judgments record {recorded} requests = served {dict(faults)}")


@pytest.mark.parametrize("shape", list(SHAPES))
def test_score_records_every_request_the_server_saw(tmp_path: Path, shape: str) -> None:
    out = tmp_path / "run"
    lms = ("openai/fake-a", "openai/fake-b") if shape == "jury" else ()
    with FaultServer(choose=_plan, retry_after_s=0, hang_s=3) as server:
        code = _run([*SCORE, *_model(server.url, *lms), *SHAPES[shape], "-o", str(out)])
        recorded, judged = _recorded(out / "judgments.jsonl")
        _check(server, recorded, judged)
    assert code == 0, (out / "judgments.jsonl").read_text("utf-8")[-2000:]


def test_bench_units_record_every_request_the_server_saw(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["bench", str(SAMPLES / "conversation_5.json"), "--model", "openai/fake-m"]
    argv += ["--tasks", "drafting,emotion,preference", "-B", "50", "-q", "-o", str(out)]
    with FaultServer(choose=_plan, retry_after_s=0, hang_s=3) as server:
        code = _run([*argv, *_model(server.url, "openai/fake-j")])
        recorded, judged = _recorded(out / "judgments.jsonl")
        _check(server, recorded, judged)
    assert code == 0


def test_align_held_out_judgments_record_every_request_the_server_saw(tmp_path: Path) -> None:
    items, ratings = write_labels(tmp_path, conversations=10)
    out = tmp_path / "judge"
    argv = ["align", str(ratings), "--items", str(items), "--rubric"]
    argv += ["empathic-communication-epitome", "--optimizer", "labeled-fewshot", "-B", "50"]
    with FaultServer(choose=_plan, retry_after_s=0, hang_s=3) as server:
        code = _run([*argv, *_model(server.url), "-o", str(out)])
        # labeled-fewshot makes no model call: every request is a held-out judgment's
        files = (out / "test-before.jsonl", out / "test-after.jsonl")
        recorded, judged = _recorded(*files)
        _check(server, recorded, judged)
    assert code == 0
    # the held-out judgments go through the same retry layer: every fault was retried away
    statuses = {json.loads(x)["status"] for f in files for x in f.read_text("utf-8").splitlines()}
    assert statuses == {"ok"}
