"""A fault-injecting OpenAI-compatible chat server on loopback, for tests and benchmarks.

:class:`FaultServer` answers ``POST /v1/chat/completions`` (and ``GET /v1/models``) on
``127.0.0.1`` only. Each request gets one *fault* (see :data:`FAULTS`), chosen either from a
seeded mix of probabilities or by a function of the request; a valid answer is built from the
JSON schema the client sends in ``response_format`` (``json_object`` with ``schema`` or
``json_schema``), so the server can answer any judge or task signature. Every request is
counted and logged (fault, the text of the last user message), so a test can compare what the
server saw with what a run recorded — exactly.

Choosing faults is reproducible whatever the arrival order: the draw for a request depends on
the seed, a hash of its messages and how many times that same request was seen before.

Faults
------
``ok``            a valid answer (finish_reason ``stop``)
``rate_limit``    HTTP 429 with ``Retry-After: <retry_after_s>``
``server_error``  HTTP 500
``overloaded``    HTTP 503 with ``Retry-After``
``garbage``       200 with text that is not JSON
``two_objects``   200 with a valid answer followed by a second object (higher scores)
``text_outside``  200 with prose around a valid answer
``truncated``     200 with a complete valid answer but ``finish_reason: "length"``
``cut``           200 with half an answer and ``finish_reason: "length"``
``bool_score``    200 with ``true`` for every integer field
``hex_score``     200 with ``"0x7"``-style strings for every integer field
``out_of_scale``  200 with an integer one above the scale for every integer field
``fraction``      200 with ``"7/7"``-style strings for every integer field
``empty``         200 with an empty message
``hang``          no answer for ``hang_s`` seconds (the client's timeout fires), then 500

A request without a JSON schema (a one-criterion question) gets a bare answer for ``ok``: a
digit on the scale its prompt names, or ``yes`` / ``no``; a request asking for ``logprobs``
gets them for every token of its answer (so the expected-score judges can be served too).

Example
-------
>>> with FaultServer(mix={"ok": 0.7, "rate_limit": 0.3}, seed=1) as server:  # doctest: +SKIP
...     lm = resolve_lm("openai/fake", api_base=server.url, cache=False)
...     ...
...     server.count("rate_limit")
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from attune_judge.testing._answers import (
    answer_for_schema,
    bare_answer,
    integer_fields,
    schema_of,
    token_logprobs,
)

__all__ = ["BAD_ANSWER_FAULTS", "FAULTS", "FaultServer", "ServedRequest", "answer_for_schema"]

FAULTS = (
    "ok",
    "rate_limit",
    "server_error",
    "overloaded",
    "garbage",
    "two_objects",
    "text_outside",
    "truncated",
    "cut",
    "bool_score",
    "hex_score",
    "out_of_scale",
    "fraction",
    "empty",
    "hang",
)
"""Every fault the server can inject (see the module docstring)."""

BAD_ANSWER_FAULTS = frozenset(FAULTS) - {"ok", "rate_limit", "server_error", "overloaded", "hang"}
"""Faults that answer 200 with an answer that must never be accepted."""


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024
    """Pending connections the socket queues (the standard library's 5 reset clients that
    open more than a few connections at once: 19 of 1,000 at concurrency 128)."""


@dataclass(frozen=True)
class ServedRequest:
    """One request as the server saw it."""

    number: int
    """1-based arrival number."""
    fault: str
    """The fault it got."""
    user_text: str
    """Content of the last user message."""
    key: str
    """SHA-256 of the request's messages."""
    repeat: int
    """How many times the same messages were seen before (0 = first time)."""
    target: str = ""
    """The request target: path and query (``/v1/chat/completions?key=K``)."""
    authorization: str | None = None
    """The ``Authorization`` header it came with, ``None`` without one."""


def _user_text(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


class FaultServer:
    """An OpenAI-compatible server on ``127.0.0.1`` that injects faults (module docstring).

    Parameters
    ----------
    mix
        Fault → probability (the rest is ``ok``). Ignored when ``choose`` is given.
    choose
        ``(request_number, user_text, repeat) -> fault``: a deterministic plan instead of
        ``mix`` (``repeat`` counts earlier requests with the same messages).
    seed
        Seed of the fault draws and of the valid answers' values.
    latency_s
        Seconds every request waits before it is answered.
    retry_after_s
        ``Retry-After`` sent with 429/503 (``None``: no header).
    hang_s
        How long a ``hang`` request stays unanswered.
    answer
        ``(schema, user_text, rng) -> answer object`` for ``ok`` (default
        :func:`answer_for_schema`).
    port
        Port (0: a free one).
    rate_limit
        ``(requests per second, burst)``: a token bucket in front of every fault; a request
        that finds it empty gets ``rate_limit`` (HTTP 429 with ``Retry-After``), as a
        provider's rate limit answers.
    keep_alive
        Keep connections open between requests (HTTP/1.1 keep-alive, as real servers do; use
        it for benchmarks). Off by default: each answer closes its connection, so no pooled
        client socket outlives a test.

    Attributes
    ----------
    url
        ``http://127.0.0.1:<port>/v1`` (pass as ``api_base``).
    log
        Every request served, as :class:`ServedRequest`, in arrival order.
    """

    def __init__(
        self,
        mix: Mapping[str, float] | None = None,
        *,
        choose: Callable[[int, str, int], str] | None = None,
        seed: int = 0,
        latency_s: float = 0.0,
        retry_after_s: float | None = 1.0,
        hang_s: float = 30.0,
        answer: Callable[[dict[str, Any], str, random.Random], dict[str, Any]] | None = None,
        port: int = 0,
        keep_alive: bool = False,
        rate_limit: tuple[float, float] | None = None,
    ) -> None:
        mix = dict(mix or {})
        unknown = sorted(set(mix) - set(FAULTS))
        if unknown:
            raise ValueError(f"unknown faults {unknown}; known: {list(FAULTS)}")
        if sum(mix.values()) > 1.0 + 1e-9 or any(p < 0 for p in mix.values()):
            raise ValueError("fault probabilities must be >= 0 and sum to at most 1")
        self.mix = mix
        self.choose = choose
        self.seed = seed
        self.latency_s = latency_s
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self.keep_alive = keep_alive
        self.answer = answer or (lambda schema, text, rng: answer_for_schema(schema, rng))
        self._bare = answer is None  # a request without a schema gets a bare level
        self.log: list[ServedRequest] = []
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()
        self.rate_limit = rate_limit
        self._tokens = rate_limit[1] if rate_limit else 0.0
        self._filled_at = time.monotonic()
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread: threading.Thread | None = None
        real_port = int(self._httpd.server_address[1])
        self.url = f"http://127.0.0.1:{real_port}/v1"

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FaultServer:
        """Serve in a background thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="fault-server", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (hung requests are released) and close the socket."""
        self._closing.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- counts -----------------------------------------------------------------------------

    @property
    def requests(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.log)

    def count(self, fault: str | None = None) -> int:
        """Requests that got ``fault`` (all requests when ``None``)."""
        with self._lock:
            return sum(1 for r in self.log if fault is None or r.fault == fault)

    def faults(self) -> Counter[str]:
        """Requests per fault."""
        with self._lock:
            return Counter(r.fault for r in self.log)

    def requests_containing(self, text: str) -> list[ServedRequest]:
        """The requests whose last user message contains ``text``, in arrival order."""
        with self._lock:
            return [r for r in self.log if text in r.user_text]

    # -- serving ----------------------------------------------------------------------------

    def _draw(self, key: str, repeat: int, number: int, text: str) -> str:
        if self.choose is not None:
            fault = self.choose(number, text, repeat)
            if fault not in FAULTS:
                raise ValueError(f"choose returned unknown fault {fault!r}")
            return fault
        digest = hashlib.sha256(f"{self.seed}:{key}:{repeat}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        edge = 0.0
        for fault, p in self.mix.items():
            edge += p
            if u < edge:
                return fault
        return "ok"

    def _take_token(self) -> bool:
        """One token of the rate limit's bucket (under ``_lock``); ``False`` when empty."""
        assert self.rate_limit is not None
        rate, burst = self.rate_limit
        now = time.monotonic()
        self._tokens = min(burst, self._tokens + (now - self._filled_at) * rate)
        self._filled_at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def _register(
        self, body: dict[str, Any], target: str = "", authorization: str | None = None
    ) -> ServedRequest:
        messages = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
        key = hashlib.sha256(messages.encode("utf-8")).hexdigest()
        text = _user_text(body)
        with self._lock:
            repeat = self._seen[key]
            self._seen[key] += 1
            number = len(self.log) + 1
            fault = self._draw(key, repeat, number, text)
            if self.rate_limit is not None and not self._take_token():
                fault = "rate_limit"
            served = ServedRequest(number, fault, text, key, repeat, target, authorization)
            self.log.append(served)
        return served

    def _content(self, fault: str, body: dict[str, Any], served: ServedRequest) -> str:
        schema = schema_of(body)
        rng = random.Random(f"{self.seed}:{served.key}:{served.repeat}")
        if fault in ("ok", "truncated") and self._bare and not schema.get("properties"):
            return bare_answer(body, rng)  # a one-criterion question: a digit, or yes / no
        good = self.answer(schema, served.user_text, rng)
        ints = integer_fields(schema)
        if fault in ("ok", "truncated"):
            return json.dumps(good)
        if fault == "garbage":
            return "I'm sorry, I can't produce JSON today {oops"
        if fault == "two_objects":
            second = {**good, **{k: top for k, top in ints.items()}}
            return json.dumps(good) + "\n" + json.dumps(second)
        if fault == "text_outside":
            return "Here is my evaluation:\n" + json.dumps(good) + "\nHope this helps!"
        if fault == "cut":
            text = json.dumps(good)
            return text[: max(1, len(text) // 2)]
        if fault == "empty":
            return ""
        bad = dict(good)
        for name, top in ints.items():
            bad[name] = {
                "bool_score": True,
                "hex_score": hex(top),
                "out_of_scale": top + 1,
                "fraction": f"{top}/{top}",
            }[fault]
        if not ints:  # nothing numeric to corrupt: corrupt every field's type instead
            bad = dict.fromkeys(good, True)
        return json.dumps(bad)

    def _completion(self, body: dict[str, Any], content: str, finish: str) -> dict[str, Any]:
        prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": finish,
        }
        if body.get("logprobs"):
            choice["logprobs"] = token_logprobs(content, int(body.get("top_logprobs") or 0))
        return {
            "id": f"chatcmpl-fault-{len(self.log)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fault-server"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": max(1, len(content.split())),
                "total_tokens": prompt + max(1, len(content.split())),
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body are two writes: without TCP_NODELAY the body waits for the
            # client's delayed ACK (~40 ms per keep-alive request on Linux)
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                return

            def _send(
                self, code: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    if not server.keep_alive:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout): nothing to answer
                    self.close_connection = True

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                served = server._register(body, self.path, self.headers.get("Authorization"))
                if server.latency_s:
                    server._closing.wait(server.latency_s)
                server._respond(self, body, served)

        return Handler

    def _respond(self, handler: Any, body: dict[str, Any], served: ServedRequest) -> None:
        fault = served.fault
        retry = {"Retry-After": f"{self.retry_after_s:g}"} if self.retry_after_s is not None else {}
        if fault == "rate_limit":
            handler._send(429, _error("rate limit reached", "rate_limit_exceeded"), retry)
        elif fault == "overloaded":
            handler._send(503, _error("server overloaded", "overloaded"), retry)
        elif fault == "server_error":
            handler._send(500, _error("internal error", "server_error"))
        elif fault == "hang":
            self._closing.wait(self.hang_s)
            handler._send(500, _error("hung request released", "server_error"))
        else:
            finish = "length" if fault in ("truncated", "cut") else "stop"
            content = self._content(fault, body, served)
            handler._send(200, self._completion(body, content, finish))


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": code, "code": code}}
