"""The labelling server under a hostile client (issue 44, point 4).

Before: 64 stalled connections made the server answer 503 to everyone before any token check
(uvicorn's ``limit_concurrency=64``), a deeply nested body or a 10,000-digit integer got 500,
a key given twice was accepted (the last won), and any ``Host`` was answered. Here a real
server (``attune-judge annotate`` in its own process) gets 200 stalled sockets and then a
legitimate annotator labels an item; the stalled sockets are closed by the server; no body
gets a 500.
"""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.annotate._fixtures import make_items, make_rubric
from tests.annotate.test_browser import _free_port, _start

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
TOKEN_HEADER = "X-Annotate-Token"  # the JSON API's token header (README, "annotate")


def _request(
    port: int, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def _serve(tmp_path: Path) -> tuple[Any, int, str]:
    """``attune-judge annotate`` serving in its own process: (process, port, alice's token)."""
    items, rubric = make_items(tmp_path), make_rubric(tmp_path)
    db, log, port = tmp_path / "labels.sqlite", tmp_path / "server.log", _free_port()
    cmd = [sys.executable, "-m", "attune_judge", "annotate", str(items), "--task", "ratings"]
    cmd += ["--rubric", str(rubric), "--db", str(db), "--annotator", "alice", "--k", "2"]
    server, links = _start([*cmd, "--port", str(port)], port, log)
    return server, port, links["alice"].split("token=", 1)[1]


def test_stalled_connections_do_not_stop_an_annotator(tmp_path: Path) -> None:
    server, port, token = _serve(tmp_path)
    db = tmp_path / "labels.sqlite"
    stalled: list[socket.socket] = []
    try:
        for k in range(200):  # 200 connections that never finish a request
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            if k % 2:
                s.sendall(b"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a head
            stalled.append(s)
        status, view = _request(port, "GET", "/api/next", **{TOKEN_HEADER: token})
        assert status == 200, view
        answer = json.dumps({"key": view["item"]["key"], "answers": {"warmth": 3, "fit": 4}})
        status, stored = _request(
            port,
            "POST",
            "/api/label",
            answer.encode(),
            **{TOKEN_HEADER: token, "Content-Type": "application/json"},
        )
        assert status == 200, stored
        # a Host that is not the bound address: refused (a loopback server is not rebindable)
        status, _ = _request(port, "GET", "/api/next", **{TOKEN_HEADER: token, "Host": "evil.test"})
        assert status == 400
        # the server closes the stalled sockets (no header timeout before: never)
        for s in (stalled[0], stalled[1]):
            assert s.recv(1024) == b""
    finally:
        for s in stalled:
            s.close()
        server.terminate()
        server.wait(timeout=30)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM labels").fetchone() == (1,)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    process, port, token = _serve(tmp_path_factory.mktemp("hostile"))
    try:
        yield port, token
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"key": ' + "9" * 10_000 + "}", "not valid JSON"),
        ('{"key": "a", "key": "b"}', "given twice"),
        (b"\xff\xfe{}", "not valid JSON"),
        ('{"key": 1e999999}', "field key"),
    ],
)
def test_a_malformed_body_is_400_never_500(
    server: tuple[int, str], body: str | bytes, message: str
) -> None:
    port, token = server
    data = body.encode() if isinstance(body, str) else body
    if len(data) > 64 * 1024:  # over the body limit: refused before parsing (413)
        data = data[: 32 * 1024] + data[-32 * 1024 :]
    headers = {TOKEN_HEADER: token, "Content-Type": "application/json"}
    status, answer = _request(port, "POST", "/api/label", data, **headers)
    assert status == 400, answer
    assert message in answer["error"]
