"""``--score-mode expected`` against an OpenAI-compatible server this test starts on loopback.

The server answers every chat completion with "4" and, when ``with_logprobs``, OpenAI-style
``logprobs.content[].top_logprobs``: P("4") = 0.5, P("5") = 0.25, P("2") = 0.25, so every
criterion's expected score is 4(0.5) + 5(0.25) + 2(0.25) = 3.75.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import JudgeItem, Judgment
from tests._http_clients import close_http_clients

TOP = [("4", 0.5), ("5", 0.25), ("2", 0.25)]


class _Server:
    def __init__(self, with_logprobs: bool) -> None:
        self.with_logprobs = with_logprobs
        self.bodies: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.bodies.append(body)
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": {"role": "assistant", "content": "4"},
                    "finish_reason": "stop",
                }
                if owner.with_logprobs and body.get("logprobs"):
                    top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in TOP]
                    choice["logprobs"] = {
                        "content": [{**top[0], "top_logprobs": top[: body["top_logprobs"]]}]
                    }
                data = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model"),
                        "choices": [choice],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_port}/v1"


@pytest.fixture(params=[True, False], ids=["logprobs", "no-logprobs"])
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    srv = _Server(with_logprobs=request.param)
    thread = threading.Thread(target=srv.httpd.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()
    thread.join()
    close_http_clients()


def test_judge_command_reads_server_logprobs_or_names_the_problem(
    server: _Server,
    item: JudgeItem,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "item.json"
    path.write_text(item.model_dump_json(), encoding="utf-8")
    args = [
        "judge",
        str(path),
        "--rubric",
        "empathic-communication-empatheticdialogues",
        "--lm",
        "openai/fake",
        "--api-base",
        server.base,
        "--score-mode",
        "expected",
        "--no-reference",
        "--no-cache",
    ]
    with pytest.raises(SystemExit) as done:
        main(args)
    out, err = capsys.readouterr()
    assert server.bodies[0]["logprobs"] is True and server.bodies[0]["top_logprobs"] == 20
    if not server.with_logprobs:
        assert done.value.code == 2
        assert err.startswith("error: ") and "returned no token logprobs" in err
        assert "Traceback" not in err
        return
    assert done.value.code == 0
    judgment = Judgment.model_validate_json(out)
    assert judgment.status == "ok"
    assert judgment.scores == pytest.approx({"empathy": 3.75, "relevance": 3.75, "fluency": 3.75})
    assert len(server.bodies) == 3  # one call per criterion
    # entropy of (0.5, 0.25, 0.25) = 0.5 + 0.5 + 0.5 = 1.5 bits
    assert judgment.details["distributions"]["empathy"]["entropy_bits"] == pytest.approx(1.5)
