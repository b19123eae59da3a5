"""A loopback fake of an OpenAI-compatible server: chat completions, files and batches.

:class:`FakeBatchServer` answers ``POST /v1/chat/completions`` with a responder function
(messages → reply text, as :class:`~attune_judge.testing.ScriptedEngine`) and implements the
batch workflow of the OpenAI API on top of it:

- ``POST /v1/files`` (multipart, ``purpose=batch``) stores a JSONL of requests;
- ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``) creates a
  batch in ``validating``; every ``GET /v1/batches/{id}`` advances it one step
  (``validating`` → ``in_progress`` → … → ``completed``, ``polls_to_complete`` polls in
  all), and on completion writes an output file (one line per answered request:
  ``{"id", "custom_id", "response": {"status_code", "body"}, "error": null}``) and an error
  file (lines with ``"error"``);
- ``GET /v1/files/{id}/content`` returns a file; ``POST /v1/batches/{id}/cancel`` cancels;
  ``GET /v1/batches`` lists batches newest first (``limit``, ``after``, ``has_more``).

Failure injection: ``line_error(custom_id, body) -> (status_code, message) | None`` makes a
request of a batch fail (written to the error file the way OpenAI writes a failed line), and
``expire_batches`` makes the first N batches end ``expired`` after answering only
``expire_answers`` of their requests (the rest appear in the error file with code
``batch_expired``, as OpenAI reports them). Everything the clients sent is kept for
assertions: ``authorizations`` (the ``Authorization`` headers), ``targets`` (paths and
queries), ``chat_calls``, ``uploads``, ``batches``, ``polls``. ``on_request(method, path,
stage)`` is called with ``stage`` ``"received"`` before a request is handled and
``"handled"`` after it took effect and before the answer is sent (a test kills its client
there, or sleeps past the client's timeout).

Only for tests and benchmarks: it binds ``127.0.0.1`` on a free port and runs in a thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeBatchServer"]

Responder = Callable[[list[dict[str, Any]]], str]
LineError = Callable[[str, dict[str, Any]], "tuple[int, str] | None"]
OnRequest = Callable[[str, str, str], None]


class FakeBatchServer:
    """An OpenAI-compatible fake (chat completions, files, batches) on a loopback port.

    Parameters
    ----------
    responder
        ``messages -> reply text`` for chat completions and for every batch line.
    latency_s
        Sleep per chat completion.
    polls_to_complete
        Status polls a batch takes to finish (>= 2: one to leave ``validating``).
    line_error
        Per-line failure injector for batches (see the module docstring).
    expire_batches, expire_answers
        The first ``expire_batches`` batches expire after answering ``expire_answers`` lines.

    Use as a context manager; :attr:`base_url` is ``http://127.0.0.1:<port>/v1``.
    """

    def __init__(
        self,
        responder: Responder,
        *,
        latency_s: float = 0.0,
        polls_to_complete: int = 3,
        line_error: LineError | None = None,
        expire_batches: int = 0,
        expire_answers: int = 0,
        on_request: OnRequest | None = None,
    ) -> None:
        self.responder = responder
        self.on_request = on_request
        self.latency_s = latency_s
        self.polls_to_complete = max(2, polls_to_complete)
        self.line_error = line_error
        self.expire_batches = expire_batches
        self.expire_answers = expire_answers
        self.lock = threading.RLock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads: list[str] = []
        self.authorizations: list[str | None] = []
        self.targets: list[str] = []
        """Each request's target (path and query), in arrival order."""
        self.chat_calls = 0
        self.polls = 0
        self._counter = 0
        self._expired = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> FakeBatchServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Bind a free loopback port and serve in a daemon thread."""
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- behaviour -------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        with self.lock:
            self._counter += 1
            return f"{prefix}-{self._counter}"

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat completion object answering ``body``."""
        text = self.responder(body.get("messages") or [])
        words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
        return {
            "id": self._new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": words,
                "completion_tokens": len(text.split()),
                "total_tokens": words + len(text.split()),
            },
        }

    def create_batch(self, request: dict[str, Any]) -> dict[str, Any]:
        """Register a batch (status ``validating``)."""
        file_id = request.get("input_file_id")
        if file_id not in self.files:
            raise KeyError(f"no such file: {file_id}")
        lines = [json.loads(x) for x in self.files[file_id].decode().splitlines() if x.strip()]
        batch = {
            "id": self._new_id("batch"),
            "object": "batch",
            "endpoint": request.get("endpoint"),
            "input_file_id": file_id,
            "completion_window": request.get("completion_window", "24h"),
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": request.get("metadata"),
            "errors": None,
            "_lines": lines,
            "_polls": 0,
        }
        with self.lock:
            self.batches[batch["id"]] = batch
        return batch

    def poll_batch(self, batch_id: str) -> dict[str, Any]:
        """The batch, advanced by one poll."""
        with self.lock:
            self.polls += 1
            batch = self.batches[batch_id]
            if batch["status"] in ("completed", "expired", "failed", "cancelled"):
                return batch
            batch["_polls"] += 1
            if batch["_polls"] < self.polls_to_complete:
                batch["status"] = "in_progress" if batch["_polls"] > 0 else "validating"
                return batch
            expire = self._expired < self.expire_batches
            if expire:
                self._expired += 1
        self._finish(batch, expire)
        return batch

    def _finish(self, batch: dict[str, Any], expire: bool) -> None:
        out, err = [], []
        for n, line in enumerate(batch["_lines"]):
            cid = line.get("custom_id")
            if expire and n >= self.expire_answers:
                err.append(
                    {
                        "id": self._new_id("batch_req"),
                        "custom_id": cid,
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the "
                            "completion window expired.",
                        },
                    }
                )
                continue
            failure = self.line_error(cid, line.get("body") or {}) if self.line_error else None
            if failure is not None:
                status, message = failure
                err.append(
                    {
                        "id": self._new_id("batch_req"),
                        "custom_id": cid,
                        "response": {
                            "status_code": status,
                            "body": {"error": {"message": message, "type": "server_error"}},
                        },
                        "error": None,
                    }
                )
                continue
            out.append(
                {
                    "id": self._new_id("batch_req"),
                    "custom_id": cid,
                    "response": {
                        "status_code": 200,
                        "request_id": self._new_id("req"),
                        "body": self.completion(line.get("body") or {}),
                    },
                    "error": None,
                }
            )
        with self.lock:
            if out:
                fid = self._new_id("file")
                self.files[fid] = "".join(json.dumps(x) + "\n" for x in out).encode()
                batch["output_file_id"] = fid
            if err:
                fid = self._new_id("file")
                self.files[fid] = "".join(json.dumps(x) + "\n" for x in err).encode()
                batch["error_file_id"] = fid
            batch["request_counts"] = {
                "total": len(batch["_lines"]),
                "completed": len(out),
                "failed": len(err),
            }
            batch["status"] = "expired" if expire else "completed"


def _public(batch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in batch.items() if not k.startswith("_")}


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeBatchServer
    protocol_version = "HTTP/1.1"
    # headers and body are two writes: without TCP_NODELAY the body waits for the
    # client's delayed ACK (~40 ms per keep-alive request on Linux)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silent."""

    def _stage(self, stage: str) -> None:
        hook = self.server_fake.on_request
        if hook is not None:
            hook(self.command, self.path.split("?")[0].rstrip("/"), stage)

    def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
        self._stage("handled")
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        # one request per connection: clients close their sockets instead of leaving pooled
        # ones to the garbage collector (a ResourceWarning, an error under pytest)
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message, "type": "invalid_request_error"}})

    def _received(self) -> FakeBatchServer:
        fake = self.server_fake
        self._stage("received")
        with fake.lock:
            fake.authorizations.append(self.headers.get("Authorization"))
            fake.targets.append(self.path)
        return fake

    def do_POST(self) -> None:
        fake = self._received()
        raw = self._body()
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/chat/completions"):
            with fake.lock:
                fake.chat_calls += 1
            if fake.latency_s:
                time.sleep(fake.latency_s)
            self._send(200, fake.completion(json.loads(raw or b"{}")))
        elif path.endswith("/files"):
            content = _multipart_file(self.headers.get("Content-Type", ""), raw)
            if content is None:
                self._error(400, "expected a multipart upload with a 'file' part")
                return
            fid = fake._new_id("file")
            with fake.lock:
                fake.files[fid] = content
                fake.uploads.append(fid)
            self._send(
                200,
                {"id": fid, "object": "file", "bytes": len(content), "purpose": "batch"},
            )
        elif path.endswith("/batches"):
            try:
                batch = fake.create_batch(json.loads(raw or b"{}"))
            except KeyError as exc:
                self._error(400, str(exc))
                return
            self._send(200, _public(batch))
        elif path.endswith("/cancel") and "/batches/" in path:
            bid = path.split("/")[-2]
            with fake.lock:
                found = fake.batches.get(bid)
                if found is not None and found["status"] in ("validating", "in_progress"):
                    found["status"] = "cancelled"
            if found is None:
                self._error(404, f"no such batch: {bid}")
            else:
                self._send(200, _public(found))
        else:
            self._error(404, f"unknown path {self.path}")

    def do_GET(self) -> None:
        from urllib.parse import parse_qs, urlsplit

        fake = self._received()
        url = urlsplit(self.path)
        path = url.path.rstrip("/")
        parts = path.split("/")
        if path.endswith("/batches"):
            query = parse_qs(url.query)
            limit = int((query.get("limit") or ["20"])[0])
            with fake.lock:
                listed = [_public(b) for b in reversed(fake.batches.values())]
            after = (query.get("after") or [""])[0]
            if after:
                ids = [b["id"] for b in listed]
                listed = listed[ids.index(after) + 1 :] if after in ids else []
            page = listed[:limit]
            self._send(200, {"object": "list", "data": page, "has_more": len(listed) > limit})
        elif "/batches/" in path:
            bid = parts[-1]
            if bid not in fake.batches:
                self._error(404, f"no such batch: {bid}")
                return
            self._send(200, _public(fake.poll_batch(bid)))
        elif path.endswith("/content") and "/files/" in path:
            fid = parts[-2]
            if fid not in fake.files:
                self._error(404, f"no such file: {fid}")
                return
            self._send(200, None, raw=fake.files[fid])
        else:
            self._error(404, f"unknown path {self.path}")


def _multipart_file(content_type: str, raw: bytes) -> bytes | None:
    """The content of the ``file`` part of a multipart/form-data body."""
    if "multipart/form-data" not in content_type:
        return None
    message = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else None
    return None
