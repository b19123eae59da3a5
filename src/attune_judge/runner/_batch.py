"""Judging through a provider's batch API: same judges, same judgments, about half the price.

How it works, without touching the judges: the judges of a batch run talk to a **collector**,
an HTTP server on ``127.0.0.1`` inside this process that speaks the provider's protocol.

1. *Collect.* Every pending task is judged against the collector. A request the collector has
   no answer for is recorded (method, path, exact JSON body) and refused with a marked error, so
   the judgment comes back as a "deferred" ``lm_error``, which is dropped (never recorded).
2. *Submit.* The recorded requests become one JSONL file (``custom_id`` = SHA-256 of path and
   body), uploaded and turned into a batch (``/v1/files``, ``/v1/batches``). Each step is
   recorded in ``RUN/batch/batches.jsonl`` before the next starts (the intent and its saved
   file, the uploaded file, the batch id: :mod:`attune_judge.runner._batch_state`), so a run
   killed anywhere in creation, or a creation call that timed out, adopts the batch the
   provider already made instead of paying for it twice, and a killed run resumes polling.
3. *Poll and download.* When the batch ends, its output and error files are downloaded; each
   line is mapped back by ``custom_id``; successful answers are appended to
   ``RUN/batch/results.jsonl`` (kept across invocations), failed lines are held for this
   invocation only.
4. *Answer.* The deferred tasks are judged again: now the collector replies with the
   provider's own response body, the judge parses it exactly as it would a direct answer, and
   the runner records the judgment. A failed line (HTTP 4xx/5xx in the batch) becomes that
   item's ``lm_error`` naming the batch and the provider's message; a new invocation retries it
   in a new batch, as any ``lm_error``. Programs that make several calls per item go round
   again (one batch per round).

Expiry: requests an ``expired`` batch did not answer are submitted again (at most
``max_submissions`` times each, then recorded as an ``lm_error``); a ``failed`` or
``cancelled`` batch fails its items with the provider's reason. DSPy's request cache sits
underneath as usual: an answer already cached never reaches the collector.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from attune_judge.data import Judgment
from attune_judge.errors import UserError
from attune_judge.judges import Judge
from attune_judge.runner._batch_api import OpenAIBatchClient
from attune_judge.runner._batch_state import BatchState, create_batch_once, request_key
from attune_judge.runner._executor import ThreadExecutor
from attune_judge.runner._plan import Task

__all__ = ["DEFERRED_MARK", "BatchExecutor", "BatchState", "request_key"]

log = logging.getLogger("attune_judge.batch")

T = TypeVar("T")
R = TypeVar("R")

DEFERRED_MARK = "attune-batch-deferred"
"""In the error of a judgment whose model call waits for a batch."""

_FINAL = {"completed", "expired", "failed", "cancelled"}


class _Collector:
    """The loopback server the batch judges call: answers known requests, records the rest."""

    def __init__(self, answers: dict[str, dict[str, Any]]) -> None:
        self.lock = threading.Lock()
        self.answers = answers
        """Request key → provider response body (HTTP 200)."""
        self.failures: dict[str, str] = {}
        """Request key → error message, answered as HTTP 400 in this invocation."""
        self.deferred: dict[str, tuple[str, dict[str, Any]]] = {}
        """Request key → (path, body) of requests waiting for a batch."""
        collector = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Silent."""

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                status, payload = collector.handle(self.path, json.loads(raw or b"{}"))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")  # no pooled sockets left to the GC
                self.close_connection = True
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def handle(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        key = request_key(path, body)
        with self.lock:
            if key in self.answers:
                return 200, self.answers[key]
            if key in self.failures:
                return 400, _error(self.failures[key], "attune_batch_failed")
            self.deferred[key] = (path, body)
        return 400, _error(f"{DEFERRED_MARK}: this request waits for a batch", DEFERRED_MARK)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def is_deferred(judgment: Any) -> bool:
    """A judgment whose model call waits for a batch (never recorded)."""
    return (
        isinstance(judgment, Judgment)
        and judgment.status == "lm_error"
        and DEFERRED_MARK in judgment.model_dump_json()
    )


class BatchExecutor:
    """Runs a plan's tasks through an OpenAI-compatible batch API (see the module docstring).

    Parameters
    ----------
    run_dir
        The run directory; batch ids and answers are kept in ``run_dir/batch/``.
    judges_for
        Builds the run's judges talking to a given API base (the collector's URL); they must
        have the ids of the plan's judges.
    client
        The batch API client (the provider's files and batches endpoints).
    poll_s
        Seconds between status polls.
    max_submissions
        Times one request is submitted in this invocation (expired batches) before its item
        is recorded as an ``lm_error``.
    max_batch_requests
        Requests per batch (OpenAI allows 50,000).
    completion_window
        The batch's completion window (``24h``).
    concurrency
        Threads judging against the collector (CPU-bound: a few are enough).
    """

    def __init__(
        self,
        run_dir: Path,
        judges_for: Callable[[str], Sequence[Judge]],
        client: OpenAIBatchClient,
        *,
        poll_s: float = 30.0,
        max_submissions: int = 3,
        max_batch_requests: int = 50_000,
        completion_window: str = "24h",
        concurrency: int = 8,
    ) -> None:
        self.state = BatchState(Path(run_dir) / "batch")
        self.judges_for = judges_for
        self.client = client
        self.poll_s = poll_s
        self.max_submissions = max_submissions
        self.max_batch_requests = max_batch_requests
        self.completion_window = completion_window
        self.concurrency = concurrency
        self.run_name = Path(run_dir).name
        self._collector: _Collector | None = None
        self._judges: dict[str, Judge] = {}
        self.batches_submitted: list[str] = []
        """Ids of the batches this executor submitted (for the caller's report)."""

    def __enter__(self) -> BatchExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the collector and build the judges against it (idempotent)."""
        if self._collector is not None:
            return
        self._collector = _Collector(self.state.answers())
        self._judges = {j.judge_id: j for j in self.judges_for(self._collector.base_url)}

    def close(self) -> None:
        """Stop the collector and the API client."""
        if self._collector is not None:
            self._collector.close()
            self._collector = None
        self.client.close()

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        *,
        stop: threading.Event | None = None,
    ) -> Iterator[R]:
        """See :meth:`Executor.map_unordered`; judgments come out as their batches finish."""
        self.start()
        assert self._collector is not None
        pending: list[Any] = []
        for task in tasks:
            if isinstance(task, Task):
                judge = self._judges.get(task.judge.judge_id)
                if judge is None:
                    raise UserError(
                        f"--batch: the batch judges {sorted(self._judges)} do not include "
                        f"judge {task.judge.judge_id!r} of the plan"
                    )
                task = Task(task.item, judge)  # type: ignore[assignment]
            pending.append(task)
        submissions: Counter[str] = Counter()
        threads = ThreadExecutor(self.concurrency)
        while pending:
            waiting: list[Any] = []

            def run(task: Any) -> tuple[Any, Any]:
                return task, fn(task)

            for task, result in threads.map_unordered(run, pending, stop=stop):
                if is_deferred(result):
                    waiting.append(task)
                else:
                    yield result
            if not waiting or (stop is not None and stop.is_set()):
                return
            self._submit_new(submissions)
            self._wait_all(stop)
            if stop is not None and stop.is_set():
                return
            pending = waiting

    # -- rounds ------------------------------------------------------------------------------

    def _submit_new(self, submissions: Counter[str]) -> None:
        collector = self._collector
        assert collector is not None
        for intent in self.state.pending_intents():  # creations an interruption left halfway
            self._create(intent)
        in_flight = {k for keys in self.state.open_batches().values() for k in keys}
        with collector.lock:
            deferred = dict(collector.deferred)
            collector.deferred.clear()
        by_path: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for key, (path, body) in deferred.items():
            if key in in_flight:
                continue
            if submissions[key] >= self.max_submissions:
                with collector.lock:
                    collector.failures[key] = (
                        f"batch: no answer after {submissions[key]} submissions (the batches "
                        "expired); run the same command again to retry"
                    )
                continue
            submissions[key] += 1
            by_path.setdefault(path, []).append((key, body))
        for path, requests in by_path.items():
            for start in range(0, len(requests), self.max_batch_requests):
                self._submit(path, requests[start : start + self.max_batch_requests])

    def _submit(self, path: str, requests: list[tuple[str, dict[str, Any]]]) -> None:
        lines = [
            json.dumps({"custom_id": k, "method": "POST", "url": path, "body": b}) + "\n"
            for k, b in requests
        ]
        keys = [k for k, _ in requests]
        self._create(self.state.intend(path, keys, "".join(lines).encode("utf-8")))

    def _create(self, intent: dict[str, Any]) -> None:
        batch_id = create_batch_once(
            self.state,
            self.client,
            intent,
            run_name=self.run_name,
            completion_window=self.completion_window,
        )
        self.batches_submitted.append(batch_id)
        log.info(
            "batch %s submitted: %d requests to %s",
            batch_id,
            len(intent["keys"]),
            intent["endpoint"],
        )

    def _wait_all(self, stop: threading.Event | None) -> None:
        open_ = self.state.open_batches()
        last: dict[str, str] = {}
        while open_:
            for batch_id, keys in list(open_.items()):
                batch = self.client.status(batch_id)
                status = str(batch.get("status"))
                counts = batch.get("request_counts") or {}
                if last.get(batch_id) != status:
                    log.info(
                        "batch %s: %s (%s of %s done)",
                        batch_id,
                        status,
                        counts.get("completed", "?"),
                        counts.get("total", len(keys)),
                    )
                    last[batch_id] = status
                if status in _FINAL:
                    self._collect(batch, keys)
                    del open_[batch_id]
            if not open_:
                return
            deadline = time.monotonic() + self.poll_s
            while time.monotonic() < deadline:
                if stop is not None and stop.is_set():
                    return
                time.sleep(min(0.2, self.poll_s))

    def _collect(self, batch: dict[str, Any], keys: list[str]) -> None:
        """Download a finished batch's answers and map them back to request keys."""
        collector = self._collector
        assert collector is not None
        batch_id, status = str(batch["id"]), str(batch.get("status"))
        lines: list[dict[str, Any]] = []
        for field in ("output_file_id", "error_file_id"):
            if batch.get(field):
                lines.extend(self.client.download(str(batch[field])))
        n_ok = n_failed = 0
        seen: set[str] = set()
        for line in lines:
            key = str(line.get("custom_id"))
            response = line.get("response") or {}
            body = response.get("body")
            if line.get("error") is None and response.get("status_code") == 200 and body:
                self.state.answered(key, batch_id, body)
                with collector.lock:
                    collector.answers[key] = body
                n_ok += 1
                seen.add(key)
                continue
            error = line.get("error") or {}
            if error.get("code") == "batch_expired":
                continue  # not answered: submitted again in the next round
            message = (
                (body or {}).get("error", {}).get("message") if isinstance(body, dict) else None
            ) or error.get("message")
            code = response.get("status_code") or error.get("code")
            with collector.lock:
                collector.failures[key] = (
                    f"batch {batch_id}: the provider answered {code}: " + (str(message)[:500])
                )
            n_failed += 1
            seen.add(key)
        if status in ("failed", "cancelled"):
            reason = _batch_errors(batch) or f"the batch was {status}"
            with collector.lock:
                for key in keys:
                    if key not in seen:
                        collector.failures[key] = f"batch {batch_id} {status}: {reason}"
        missing = len([k for k in keys if k not in seen])
        self.state.finished(
            batch_id, status, {"n_ok": n_ok, "n_failed": n_failed, "n_missing": missing}
        )
        if missing and status == "expired":
            log.warning(
                "batch %s expired with %d of %d requests unanswered; submitting them again",
                batch_id,
                missing,
                len(keys),
            )


def _batch_errors(batch: dict[str, Any]) -> str:
    errors = batch.get("errors") or {}
    data = errors.get("data") if isinstance(errors, dict) else None
    if isinstance(data, list):
        return "; ".join(str(e.get("message", e)) for e in data[:5])
    return ""
