"""What a batch run keeps on disk, and the creation of a batch that is paid for once.

``RUN/batch/batches.jsonl`` is an append-only log of events, each flushed and fsynced before
the next step of the protocol starts:

``intent``
    A batch is about to be created for these request keys; its input JSONL is already saved
    as ``RUN/batch/intent-<id>.jsonl``. Nothing has left the machine yet.
``uploaded``
    The provider holds the input file (its ``input_file_id``). No batch was asked for yet.
``submitted``
    The batch exists (its ``batch_id``); it is polled until it ends.
``finished``
    It ended; its answers are in ``results.jsonl``.

A run killed (or a call that timed out) at any step resumes from the last recorded one
(:func:`create_batch_once`): an intent without ``uploaded`` uploads its saved file (no batch can
exist for it: the batch is asked for only after the upload is recorded); an ``uploaded`` intent
without ``submitted`` first looks for a batch the provider already made from that input file
(or with the intent in its metadata) and adopts it, and creates one only if there is none. A
failed or timed-out creation call is followed by the same look-up before it is retried. So a
request is paid for at most once per intent, whatever was interrupted.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from attune_judge.runner._batch_api import BatchApiError, OpenAIBatchClient

__all__ = ["BatchState", "create_batch_once", "request_key"]


def request_key(path: str, body: dict[str, Any]) -> str:
    """``custom_id`` of a request: SHA-256 of its path and canonical JSON body."""
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{path}\n{canonical}".encode()).hexdigest()


class BatchState:
    """``RUN/batch/``: the batch events (``batches.jsonl``) and answers (``results.jsonl``).

    Both files are append-only JSON lines, flushed and fsynced per record; a torn last line
    (a crash mid-write) is ignored when read.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.batches_path = folder / "batches.jsonl"
        self.results_path = folder / "results.jsonl"

    def _append(self, path: Path, record: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    @staticmethod
    def _read(path: Path) -> list[dict[str, Any]]:
        if not path.exists():
            return []
        out = []
        for line in path.read_text("utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:  # a torn last line
                continue
        return out

    def events(self) -> list[dict[str, Any]]:
        """Every recorded batch event, in order."""
        return self._read(self.batches_path)

    def intent_file(self, intent: str) -> Path:
        """Where the input JSONL of an intent is kept until its batch exists."""
        return self.folder / f"intent-{intent}.jsonl"

    def intend(self, endpoint: str, keys: list[str], jsonl: bytes) -> dict[str, Any]:
        """Save a batch's input and record the intent to create it; the intent record."""
        intent = uuid.uuid4().hex
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.intent_file(intent)
        with path.open("wb") as fh:
            fh.write(jsonl)
            fh.flush()
            os.fsync(fh.fileno())
        record: dict[str, Any] = {"event": "intent", "intent": intent, "endpoint": endpoint}
        record.update(keys=keys, at=time.time())
        self._append(self.batches_path, record)
        return record

    def uploaded(self, intent: str, input_file_id: str) -> None:
        """Record that the provider holds an intent's input file."""
        self._append(
            self.batches_path,
            {"event": "uploaded", "intent": intent, "input_file_id": input_file_id},
        )

    def submitted(
        self, batch_id: str, input_file_id: str, endpoint: str, keys: list[str], intent: str
    ) -> None:
        """Record a new batch (before anything waits on it); its intent's file is dropped."""
        self._append(
            self.batches_path,
            {
                "event": "submitted",
                "intent": intent,
                "batch_id": batch_id,
                "input_file_id": input_file_id,
                "endpoint": endpoint,
                "keys": keys,
                "at": time.time(),
            },
        )
        self.intent_file(intent).unlink(missing_ok=True)

    def finished(self, batch_id: str, status: str, counts: dict[str, int]) -> None:
        """Record that a batch ended (its answers are in ``results.jsonl`` by then)."""
        self._append(
            self.batches_path,
            {"event": "finished", "batch_id": batch_id, "status": status, **counts},
        )

    def answered(self, key: str, batch_id: str, body: dict[str, Any]) -> None:
        """Keep a successful answer."""
        self._append(self.results_path, {"key": key, "batch_id": batch_id, "body": body})

    def open_batches(self) -> dict[str, list[str]]:
        """Batches submitted and not finished: id → request keys."""
        open_: dict[str, list[str]] = {}
        for event in self.events():
            if event.get("event") == "submitted":
                open_[event["batch_id"]] = list(event.get("keys") or [])
            elif event.get("event") == "finished":
                open_.pop(event.get("batch_id", ""), None)
        return open_

    def pending_intents(self) -> list[dict[str, Any]]:
        """Intents without a batch yet, oldest first (``input_file_id`` once uploaded)."""
        pending: dict[str, dict[str, Any]] = {}
        for event in self.events():
            kind, intent = event.get("event"), event.get("intent")
            if kind == "intent" and intent:
                pending[intent] = dict(event)
            elif kind == "uploaded" and intent in pending:
                pending[intent]["input_file_id"] = event.get("input_file_id")
            elif kind == "submitted" and intent:
                pending.pop(intent, None)
        return list(pending.values())

    def answers(self) -> dict[str, dict[str, Any]]:
        """Successful answers by request key."""
        return {r["key"]: r["body"] for r in self._read(self.results_path) if "key" in r}


def create_batch_once(
    state: BatchState,
    client: OpenAIBatchClient,
    intent: dict[str, Any],
    *,
    run_name: str,
    completion_window: str,
) -> str:
    """Take a recorded intent to a recorded batch, paying for it at most once; the batch id.

    ``intent`` is a :meth:`BatchState.pending_intents` entry. See the module docstring.
    """
    intent_id, endpoint = str(intent["intent"]), str(intent["endpoint"])
    file_id = intent.get("input_file_id")
    if not file_id:
        jsonl = state.intent_file(intent_id).read_bytes()
        file_id = client.upload(jsonl, filename=f"attune-{intent_id}.jsonl")
        state.uploaded(intent_id, file_id)
    else:  # uploaded before an interruption: the batch may exist already
        found = client.find_batch(file_id, intent_id, since=float(intent.get("at") or 0))
        if found is not None:
            state.submitted(found, file_id, endpoint, list(intent["keys"]), intent_id)
            return found
    metadata = {"attune_run": run_name[:500], "attune_intent": intent_id}
    attempt = 0
    while True:
        try:
            batch = client.create(
                file_id,
                endpoint,
                completion_window=completion_window,
                metadata=metadata,
                retries=0,
            )
            batch_id = str(batch["id"])
            break
        except BatchApiError as exc:
            if not exc.transient or attempt >= client.retries:
                raise
        # the call may have created the batch before it failed (a timeout, a lost answer)
        found = client.find_batch(file_id, intent_id, since=float(intent.get("at") or 0))
        if found is not None:
            batch_id = found
            break
        client.backoff(attempt)
        attempt += 1
    state.submitted(batch_id, file_id, endpoint, list(intent["keys"]), intent_id)
    return batch_id
