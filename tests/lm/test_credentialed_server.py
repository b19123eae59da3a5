"""A server whose URL carries credentials (user:password, a lone token, a query key, under a
path prefix) takes DSPy's own engine like any server, and re-runs that mix cached and fresh
answers heal (issue 44, point 1).

Before: such URLs went through LiteLLM; a re-run whose answers came partly from the request
cache and partly from the server recorded ``lm_error`` "partially initialized module
'litellm'" or ``KeyError: 'litellm'`` (a worker thread unpickling a cached LiteLLM answer while
another loaded LiteLLM), with ``requests: 1`` although nothing was sent. Here every run of
the sequence (threads, worker processes, a resume) must judge every item, record exactly the
requests the loopback server received, and send each with the credentials as a header and
query, the path prefix kept.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.errors import UserError
from attune_judge.lm import ServerAddress
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.conftest import SAMPLES

pytestmark = pytest.mark.timeout(300)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

PASSWORD = "pw:CANARY/7f"
QUERY_KEY = "qk-CANARY-0b5e22"


def _score(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(["score", *argv, "--models", "original", "-B", "50", "-q"])
    return int(stop.value.code or 0)


def _judgments(run: Path) -> list[dict]:
    lines = (run / "judgments.jsonl").read_text("utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def _check(run: Path, server: FaultServer, before: int) -> tuple[int, int]:
    """Every judgment ok, its requests those the server received since ``before``; returns
    (judgments, requests sent)."""
    records = _judgments(run)
    bad = [(r["status"], r.get("error")) for r in records if r["status"] != "ok"]
    assert bad == []
    recorded = sum(int(r["details"].get("requests", 0)) for r in records)
    assert recorded == server.requests - before
    return len(records), recorded


def test_credentialed_url_mixing_cached_and_fresh_answers_across_threads_processes_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "1")
    one = str(SAMPLES / "conversation_5.json")
    with FaultServer() as server:
        head, rest = server.url.split("://", 1)
        host, path = rest.split("/", 1)
        url = f"{head}://attune:pw%3ACANARY%2F7f@{host}/proxy/{path}?key={QUERY_KEY}"
        model = ["--lm", "openai/fake", "--api-base", url, "--response-format", "json_object"]

        def run(cache: str, *argv: str) -> int:
            monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / cache))
            return _score([*argv, *model])

        # three caches holding the answers of one conversation only
        for cache in ("threads", "processes", "resume"):
            assert run(cache, one, "-o", str(tmp_path / f"seed-{cache}")) == 0
        seeded = server.requests
        assert seeded > 0
        # threads: one conversation's answers cached, the others' fresh
        before = server.requests
        assert (
            run("threads", str(SAMPLES), "-o", str(tmp_path / "t"), "--max-concurrency", "8") == 0
        )
        judged, sent = _check(tmp_path / "t", server, before)
        assert 0 < sent < judged  # a mix: some answers came from the cache
        # worker processes (each reads the disk cache itself)
        before = server.requests
        argv = ["-o", str(tmp_path / "p"), "--executor", "process", "--workers", "2"]
        assert run("processes", str(SAMPLES), *argv) == 0
        assert _check(tmp_path / "p", server, before) == (judged, sent)
        # a resume: the thread run loses its judgments of two conversations, then resumes on
        # a cache that holds one of them
        records = _judgments(tmp_path / "t")
        lost = {"conversation_5", records[-1]["conversation_id"]}
        kept = [r for r in records if not any(c in r["conversation_id"] for c in lost)]
        assert 0 < len(kept) < len(records)
        lines = "".join(json.dumps(r) + "\n" for r in kept)
        (tmp_path / "t" / "judgments.jsonl").write_text(lines, "utf-8")
        before = server.requests
        assert run("resume", str(SAMPLES), "-o", str(tmp_path / "t")) == 0
        records = _judgments(tmp_path / "t")
        assert len({r["item_id"] for r in records}) == judged
        assert all(r["status"] == "ok" for r in records)
        resumed = sum(int(r["details"].get("requests", 0)) for r in records[len(kept) :])
        assert resumed == server.requests - before > 0
        # every request carried the credentials as header and query, under the path prefix
        basic = "Basic " + base64.b64encode(f"attune:{PASSWORD}".encode()).decode()
        targets = {(r.target, r.authorization) for r in server.log}
        assert targets == {(f"/proxy/v1/chat/completions?key={QUERY_KEY}", basic)}
    printed = capsys.readouterr()
    assert PASSWORD not in printed.out + printed.err and QUERY_KEY not in printed.err


def test_a_lone_token_is_sent_as_basic_auth_and_a_cached_rerun_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "1")
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))
    one = str(SAMPLES / "conversation_5.json")
    with FaultServer() as server:
        url = server.url.replace("://", "://tok3n-CANARY@")
        argv = [one, "--lm", "openai/fake", "--api-base", url, "--per-criterion"]
        assert _score([*argv, "-o", str(tmp_path / "a")]) == 0
        sent = server.requests
        assert _check(tmp_path / "a", server, 0)[1] == sent > 0
        assert _score([*argv, "-o", str(tmp_path / "b")]) == 0
        assert server.requests == sent  # all cached: nothing sent, nothing recorded
        assert _check(tmp_path / "b", server, sent)[1] == 0
        basic = "Basic " + base64.b64encode(b"tok3n-CANARY:").decode()
        assert {(r.target, r.authorization) for r in server.log} == {
            ("/v1/chat/completions", basic)
        }


@pytest.mark.parametrize(
    ("url", "path", "params", "expected"),
    [
        ("http://h:8/v1?key=K", "/files", (), "http://h:8/v1/files?key=K"),
        ("http://h/v1/", "batches/b/cancel", (), "http://h/v1/batches/b/cancel"),
        (
            "http://u:p@h/pre/v1?key=K&a=1",
            "/batches",
            {"limit": 2},
            "http://h/pre/v1/batches?key=K&a=1&limit=2",
        ),
        ("https://[::1]:9/v1?key=a%26b", "/files", (), "https://[::1]:9/v1/files?key=a%26b"),
    ],
)
def test_endpoint_urls_join_the_path_before_the_query(
    url: str, path: str, params: object, expected: str
) -> None:
    assert ServerAddress.parse(url).url(path, params) == expected


@pytest.mark.parametrize("url", ["ftp://h/v1", "http:///v1", "http://u:secret@h:99999/v1", "h/v1"])
def test_a_malformed_server_url_is_one_line_without_its_credentials(url: str) -> None:
    with pytest.raises(UserError) as err:
        ServerAddress.parse(url)
    assert "secret" not in str(err.value) and "\n" not in str(err.value)


def test_a_call_that_fails_before_sending_records_no_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure of the audit: the request cache's read raised (``KeyError: 'litellm'``);
    the judgment recorded ``requests: 1`` although the server received nothing."""
    from dspy.clients import execution

    def broken_read(*args: object, **kwargs: object) -> None:
        raise KeyError("litellm")

    monkeypatch.setattr(execution, "_cached", broken_read)
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))
    with FaultServer() as server:
        argv = [str(SAMPLES / "conversation_5.json"), "--lm", "openai/fake"]
        argv += ["--api-base", server.url, "--max-retries", "0", "-o", str(tmp_path / "r")]
        _score(argv)
        assert server.requests == 0
    records = _judgments(tmp_path / "r")
    assert records and {r["status"] for r in records} == {"lm_error"}
    assert [r["details"]["requests"] for r in records] == [0] * len(records)


def test_the_proxy_environment_is_read_when_the_judge_model_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 47: DSPy's transport scanned the whole environment for proxy variables on every
    request (about 7 % of a judgment's client CPU). The engine of a server now reads them once,
    when the model is made, as that transport would: a proxy set then carries the requests (the
    proxy sees the server's URL as its target); a server no proxy applies to is asked directly,
    even if a proxy variable appears afterwards (the next model made would use it)."""
    from attune_judge.lm import LMSettings, resolve_lm
    from attune_judge.testing import FakeBatchServer

    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as server:
        settings = LMSettings(lm="openai/fake", api_base=server.url, cache=False)
        direct = resolve_lm(settings, check_connection=False)
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        assert direct("hello") and server.requests == 1  # still asked directly
        with FakeBatchServer(lambda messages: '{"answer": "via proxy"}') as proxy:
            monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
            proxied = resolve_lm(settings, check_connection=False)
            assert proxied("hello") == ['{"answer": "via proxy"}']
            assert proxy.targets == [f"{server.url}/chat/completions"]
        assert server.requests == 1
