"""A minimal OpenAI-compatible chat server on loopback, for tests of what reaches the wire.

It records every request body, answers with ``reply(body)`` (a JSON string by default, or a
``testing.TokenReply`` whose token log-probabilities are sent when the request asks for
``logprobs``), reports fixed token usage, and can be told to sleep before answering
(timeouts). Started and stopped by the test that uses it; no network beyond 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attune_judge.testing import TokenReply

__all__ = ["StubServer", "openai_stub"]


@dataclass
class StubServer:
    """State of a running stub: its URL, the requests it saw, and how it answers."""

    url: str
    reply: Callable[[dict[str, Any]], str | TokenReply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    delay_s: float = 0.0
    usage: tuple[int, int] = (100, 20)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _logprobs(reply: TokenReply, top: int) -> dict[str, Any]:
    """OpenAI's ``logprobs`` of a reply: per token the chosen one and its first ``top``
    alternatives (``reply.tokens`` lists them, the chosen token first)."""
    content = []
    for alternatives in reply.tokens:
        ranked = [{"token": t, "logprob": lp} for t, lp in alternatives.items()]
        content.append({**ranked[0], "top_logprobs": ranked[:top]})
    return {"content": content}


def _handler(state: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            return

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append(body)
            if state.delay_s:
                time.sleep(state.delay_s)
            reply = state.reply(body)
            text = reply.text if isinstance(reply, TokenReply) else reply
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
            if isinstance(reply, TokenReply) and reply.tokens and body.get("logprobs"):
                choice["logprobs"] = _logprobs(reply, int(body.get("top_logprobs") or 0))
            prompt, completion = state.usage
            try:
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(state.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "stub"),
                        "choices": [choice],
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                        },
                    },
                )
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

    return Handler


@contextlib.contextmanager
def openai_stub(reply: Callable[[dict[str, Any]], str | TokenReply]) -> Iterator[StubServer]:
    """Serve on a free loopback port; yield the state (``url`` ends in ``/v1``); always stop."""
    state = StubServer("", reply)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True  # a sleeping handler must not hold up the stop
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    # a short poll: shutdown() waits for the loop to look (0.5 s by default, at every stop)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
