"""``--retry-failed`` against a real loopback server: exactly the failed judgments are asked again.

A run of 80 judgments where 4 (5 %) fail on their first request (two unparseable answers,
two HTTP 500s) is then run again with ``--retry-failed``: the server must see exactly 4 new
requests, for exactly those items, and every judgment must end ``ok``, with the old failed
records still in ``judgments.jsonl`` (append-only; the last judgment wins). A plain rerun of
the same directory asks only the ``lm_error`` ones: a ``parse_error`` is final for resume.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.runner import effective_judgments
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.runner._real import write_items

pytestmark = pytest.mark.timeout(120)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

BAD = {5: "garbage", 23: "server_error", 41: "garbage", 67: "server_error"}
"""Candidate number → the fault of its first request (4 of 80)."""
_CAND = re.compile(r"CAND-(\d+)-END")


def _fault(n: int, text: str, repeat: int) -> str:
    found = _CAND.search(text)
    k = int(found.group(1)) if found else -1
    return BAD.get(k, "ok") if repeat == 0 else "ok"


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _asked(server: FaultServer, since: int) -> list[int]:
    return sorted(int(_CAND.findall(r.user_text)[0]) for r in list(server.log)[since:])


def test_retry_failed_asks_exactly_the_failed_judgments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))  # the request cache is on
    items = write_items(tmp_path / "items.jsonl", n_conv=10, n_turns=4)
    assert len(items) == 80
    out = tmp_path / "run"
    with FaultServer(choose=_fault, retry_after_s=0) as server:
        base = ["score", str(tmp_path / "items.jsonl"), "--lm", "openai/fake"]
        base += ["--api-base", server.url, "--response-format", "json_object", "-B", "200"]
        code = _cli([*base, "-o", str(out), "--max-retries", "0", "--parse-retries", "0", "-q"])
        assert code == 0 and server.requests == 80
        first = read_jsonl(out / "judgments.jsonl", Judgment)
        by_id = {it.item_id: int(_CAND.findall(it.candidate)[0]) for it in items}
        statuses = {by_id[j.item_id]: j.status for j in first}
        failed = {k for k, s in statuses.items() if s != "ok"}
        assert failed == set(BAD)
        assert Counter(statuses[k] for k in failed) == {"parse_error": 2, "lm_error": 2}

        # a plain rerun (on a copy): only the lm_error ones are asked again
        shutil.copytree(out, tmp_path / "plain")
        before = server.requests
        monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache-plain"))  # shares nothing
        assert _cli([*base, "-o", str(tmp_path / "plain"), "-q"]) == 0
        assert _asked(server, before) == [23, 67]
        plain = effective_judgments(read_jsonl(tmp_path / "plain" / "judgments.jsonl", Judgment))
        assert sorted(by_id[i] for (i, _), j in plain.items() if j.status != "ok") == [5, 41]
        monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))

        capsys.readouterr()
        before = server.requests
        assert _cli([*base, "-o", str(out), "--retry-failed"]) == 0
        assert server.requests - before == len(failed) == 4  # 5 % of 80
        assert _asked(server, before) == sorted(BAD)
    err = capsys.readouterr().err
    assert "judging 4 failed judgments again (2 lm_error, 2 parse_error)" in err
    assert "4 of 4 now ok" in err
    records = read_jsonl(out / "judgments.jsonl", Judgment)
    assert len(records) == 84 and records[:80] == first  # appended, nothing rewritten
    effective = effective_judgments(records)
    assert len(effective) == 80 and all(j.status == "ok" for j in effective.values())


def test_retry_failed_needs_an_existing_run(tmp_path: Path) -> None:
    write_items(tmp_path / "items.jsonl", n_conv=2, n_turns=2)
    out = tmp_path / "none"
    argv = ["score", str(tmp_path / "items.jsonl"), "--lm", "openai/fake", "-o", str(out)]
    assert _cli([*argv, "--api-base", "http://127.0.0.1:9/v1", "--retry-failed"]) == 2
    assert not out.exists()
