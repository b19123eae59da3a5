"""Engine plumbing shared by our DSPy engines: request → chat messages, text → ``Response``."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from dspy.lm15 import Request, Response

__all__ = [
    "AsyncTwin",
    "EngineBase",
    "make_response",
    "prompt_size",
    "request_key",
    "request_messages",
]


class EngineBase:
    """What our sync DSPy engines share (the embedded model's and the test engines'):
    :meth:`complete` answers, streaming is the events of the complete response, nothing to
    close."""

    def complete(self, request: Request) -> Response:
        """Answer one request (the DSPy engine contract)."""
        raise NotImplementedError

    def stream(self, request: Request) -> Iterator[Any]:
        """Stream one request as the events of the complete response."""
        from dspy.lm15 import response_to_events

        return iter(response_to_events(self.complete(request)))

    def close(self) -> None:
        """Nothing to release."""


E = TypeVar("E", bound=EngineBase)


class AsyncTwin(Generic[E]):
    """The async engine of a sync one (``sync``, whose state it shares): by default each call
    runs the sync :meth:`EngineBase.complete` in a worker thread, so the event loop is never
    blocked; streaming and ``aclose`` as :class:`EngineBase`."""

    def __init__(self, sync: E) -> None:
        self.sync = sync

    async def complete(self, request: Request) -> Response:
        """Answer one request without blocking the event loop."""
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Request) -> AsyncIterator[Any]:
        """Stream one request as the events of the complete response."""
        from dspy.lm15 import response_to_events

        for event in response_to_events(await self.complete(request)):
            yield event

    async def aclose(self) -> None:
        """Nothing to release."""


def request_messages(request: Request) -> list[dict[str, str]]:
    """The request as OpenAI-style chat messages (``system`` first when present).

    Parameters
    ----------
    request
        The canonical request DSPy hands to an engine.

    Returns
    -------
    list of dict
        ``{"role": ..., "content": ...}`` dictionaries, text parts joined.
    """
    messages: list[dict[str, str]] = []
    if request.system is not None:
        system = request.system
        text = (
            system if isinstance(system, str) else "".join(getattr(p, "text", "") for p in system)
        )
        messages.append({"role": "system", "content": text})
    for message in request.messages:
        messages.append({"role": message.role, "content": message.text or ""})
    return messages


def request_key(messages: list[dict[str, str]]) -> str:
    """SHA-256 of the canonical JSON of ``messages`` (the replay key)."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def make_response(
    text: str,
    *,
    model: str,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    finish_reason: str = "stop",
) -> Response:
    """Wrap ``text`` as a canonical assistant ``Response`` with token counts.

    When no counts are given they are estimated as whitespace-separated words.
    ``finish_reason`` is ``stop`` or, for an answer cut off by the token limit, ``length``.
    """
    from dspy.lm15 import Message, Response, TextPart, Usage

    return Response(
        id=None,
        model=model,
        message=Message.assistant([TextPart(text)]),
        finish_reason=finish_reason,
        usage=Usage(
            input_tokens=prompt_tokens if prompt_tokens is not None else 0,
            output_tokens=completion_tokens if completion_tokens is not None else len(text.split()),
        ),
    )


def prompt_size(messages: list[dict[str, Any]]) -> int:
    """Whitespace word count of all message contents (a rough token estimate)."""
    return sum(len(str(m.get("content", "")).split()) for m in messages)
