"""A replay DSPy engine: answers from recordings keyed by a hash of the request messages.

A recording file is JSON::

    {"format": "attune-judge-replay/1",
     "recordings": {"<sha256 of canonical messages JSON>": {"response": "...",
                                                             "prompt_tokens": 0,
                                                             "completion_tokens": 0,
                                                             "last_message": "..."}}}

In ``replay`` mode a request without a recording raises :class:`MissingRecordingError`
(never a made-up answer). In ``record`` mode every request is answered by ``source`` (any
engine with ``complete(Request) -> Response``, or a ``dspy.LM``) and stored; :meth:`save`
writes the file. ``record_missing`` answers known requests from the file and records the rest.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from attune_judge.lm import AsyncTwin
from attune_judge.testing._common import (
    EngineBase,
    make_response,
    request_key,
    request_messages,
)

if TYPE_CHECKING:
    from dspy.lm15 import Request, Response

__all__ = ["AsyncReplayEngine", "MissingRecordingError", "ReplayEngine"]

FORMAT = "attune-judge-replay/1"
ReplayMode = Literal["replay", "record", "record_missing"]


class MissingRecordingError(LookupError):
    """A replayed request has no recording (the prompt changed, or it was never recorded)."""


class ReplayEngine(EngineBase):
    """Sync DSPy engine answering from (and optionally recording to) a JSON recording file.

    Parameters
    ----------
    path
        The recording file. In ``replay`` mode it must exist.
    mode
        ``replay`` (default), ``record`` or ``record_missing``.
    source
        The engine (or ``dspy.LM``) that answers requests being recorded.
    model
        Model name reported in replayed responses.

    Attributes
    ----------
    calls, hits, recorded
        Counters (thread-safe): all requests, requests answered from recordings, new recordings.
    """

    default_model = "replay/judge"

    def __init__(
        self,
        path: str | Path,
        *,
        mode: ReplayMode = "replay",
        source: Any = None,
        model: str = "replay",
    ) -> None:
        self.path = Path(path)
        self.mode: ReplayMode = mode
        self.source = source
        self.model = model
        self._lock = threading.Lock()
        self.calls = 0
        self.hits = 0
        self.recorded = 0
        self.recordings: dict[str, dict[str, Any]] = {}
        if mode != "record" and not self.path.exists() and mode == "replay":
            raise FileNotFoundError(f"replay recording file not found: {self.path}")
        if self.path.exists():
            self.recordings = _read(self.path)
        if mode != "replay" and source is None:
            raise ValueError(f"ReplayEngine mode {mode!r} needs a source engine to record from")

    def _lookup(self, messages: list[dict[str, str]]) -> tuple[str, dict[str, Any] | None]:
        key = request_key(messages)
        with self._lock:
            self.calls += 1
            found = self.recordings.get(key) if self.mode != "record" else None
            if found is not None:
                self.hits += 1
        if found is None and self.mode == "replay":
            last = messages[-1]["content"] if messages else ""
            raise MissingRecordingError(
                f"no recording for request {key[:16]} in {self.path} "
                f"(last message starts {last[:120]!r}); re-record with mode='record_missing'"
            )
        return key, found

    def _store(self, key: str, messages: list[dict[str, str]], response: Response) -> None:
        usage = response.usage
        with self._lock:
            self.recordings[key] = {
                "response": response.text or "",
                "prompt_tokens": usage.input_tokens or 0,
                "completion_tokens": usage.output_tokens or 0,
                "last_message": messages[-1]["content"][:200] if messages else "",
            }
            self.recorded += 1

    def _replayed(self, found: dict[str, Any]) -> Response:
        return make_response(
            str(found["response"]),
            model=self.model,
            prompt_tokens=int(found.get("prompt_tokens", 0)),
            completion_tokens=int(found.get("completion_tokens", 0)),
        )

    def complete(self, request: Request) -> Response:
        """Answer one request from the recordings (or the source, when recording)."""
        messages = request_messages(request)
        key, found = self._lookup(messages)
        if found is not None:
            return self._replayed(found)
        response = _call_source(self.source, request)
        self._store(key, messages, response)
        return response

    def save(self, path: str | Path | None = None) -> Path:
        """Write all recordings as JSON (sorted keys, stable diff) and return the path."""
        target = Path(path) if path is not None else self.path
        target.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            payload = {"format": FORMAT, "recordings": dict(sorted(self.recordings.items()))}
        target.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", "utf-8")
        return target

    def async_twin(self) -> AsyncReplayEngine:
        """The async engine sharing this engine's recordings and counters."""
        return AsyncReplayEngine(self)


class AsyncReplayEngine(AsyncTwin[ReplayEngine]):
    """Async twin of a :class:`ReplayEngine`."""

    async def complete(self, request: Request) -> Response:
        """Answer one request (source calls run in a worker thread)."""
        messages = request_messages(request)
        key, found = self.sync._lookup(messages)
        if found is not None:
            return self.sync._replayed(found)
        response = await asyncio.to_thread(_call_source, self.sync.source, request)
        self.sync._store(key, messages, response)
        return response


def _call_source(source: Any, request: Request) -> Response:
    import dspy

    if isinstance(source, dspy.LM):
        import dataclasses

        response = source(dataclasses.replace(request, model=source.model))
        return response
    return source.complete(request)


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        payload = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable replay recording file: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError(f"{path}: format must be {FORMAT!r}")
    recordings = payload.get("recordings")
    if not isinstance(recordings, dict):
        raise ValueError(f"{path}: recordings must be an object")
    return recordings
