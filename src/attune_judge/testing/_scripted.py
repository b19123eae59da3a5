"""A scripted DSPy engine: replies from a queue or a function, with latency and failures.

Goes through the real ``dspy.LM`` code path (``dspy.LM(model, engine=..., async_engine=...)``),
so adapters, caching, retries and history behave exactly as with a real provider.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attune_judge.lm import AsyncTwin
from attune_judge.testing._common import (
    EngineBase,
    make_response,
    prompt_size,
    request_messages,
)

if TYPE_CHECKING:
    from dspy.lm15 import Request, Response

__all__ = [
    "AsyncScriptedEngine",
    "Messages",
    "ScriptedEngine",
    "ScriptedReply",
    "TokenReply",
    "truncated",
]

Messages = list[dict[str, str]]
"""OpenAI-style chat messages (``system`` first), as the responder and injectors see them."""


class ScriptedReply(str):
    """A scripted reply text with the ``finish_reason`` the engine reports (``stop``)."""

    finish_reason: str = "stop"


@dataclass(frozen=True)
class TokenReply:
    """A reply with token log-probabilities, as a server returning ``logprobs`` gives them.

    ``tokens`` holds one mapping per generated token: alternative text -> natural-log
    probability, the chosen token first. They are attached to the response only when the
    request asks for logprobs; a request asking for them gets none when ``tokens`` is empty
    (a server without logprobs support).
    """

    text: str
    tokens: tuple[dict[str, float], ...] = ()


def _with_logprobs(response: Response, reply: TokenReply, top_n: int) -> Response:
    from dataclasses import replace

    from dspy.lm15 import TokenLogprob, TopLogprob

    entries = []
    for alternatives in reply.tokens:
        (chosen, logprob), *_ = alternatives.items()
        top = tuple(TopLogprob(token=t, logprob=lp) for t, lp in list(alternatives.items())[:top_n])
        entries.append(TokenLogprob(token=chosen, logprob=logprob, top=top))
    return replace(response, logprobs=tuple(entries) or None)


def truncated(text: str) -> ScriptedReply:
    """A reply reported as cut off by the token limit (``finish_reason = "length"``)."""
    reply = ScriptedReply(text)
    reply.finish_reason = "length"
    return reply


class ScriptedEngine(EngineBase):
    """A sync DSPy engine whose replies come from a responder function or a queue.

    Parameters
    ----------
    responder
        Either a function ``messages -> reply`` or an iterable of replies used in order (an
        exhausted queue raises ``RuntimeError``). A reply is a text, a :class:`ScriptedReply`
        (with a finish reason), or a :class:`TokenReply` carrying token log-probabilities.
    latency_s
        Seconds to sleep per call (simulates a remote model; ``asyncio.sleep`` on async).
    fail
        Optional failure injector ``messages -> Exception | None``, called before replying
        (after the latency); a returned exception is raised as the provider's error. Use
        :func:`attune_judge.testing.rate_limit_error` for a retryable rate limit.
    model
        Model name reported in responses.

    Attributes
    ----------
    calls
        Number of ``complete`` calls, failed ones included (thread-safe).
    failures
        Number of injected failures raised.
    requests
        The messages of every call, in order.
    """

    default_model = "scripted/judge"

    def __init__(
        self,
        responder: Callable[[Messages], str | TokenReply] | Iterable[str | TokenReply],
        *,
        latency_s: float = 0.0,
        fail: Callable[[Messages], BaseException | None] | None = None,
        model: str = "scripted",
    ) -> None:
        self._function: Callable[[Messages], str | TokenReply] | None
        self._queue: deque[str | TokenReply] | None
        if callable(responder):
            self._function, self._queue = responder, None
        else:
            self._function, self._queue = None, deque(responder)
        self.latency_s = latency_s
        self.fail = fail
        self.model = model
        self._lock = threading.Lock()
        self.calls = 0
        self.failures = 0
        self.requests: list[Messages] = []

    def _begin(self, request: Request) -> Messages:
        messages = request_messages(request)
        with self._lock:
            self.calls += 1
            self.requests.append(messages)
        return messages

    def _finish(self, messages: Messages, request: Request) -> Response:
        if self.fail is not None:
            error = self.fail(messages)
            if error is not None:
                with self._lock:
                    self.failures += 1
                raise error
        if self._function is not None:
            text = self._function(messages)
        else:
            assert self._queue is not None
            with self._lock:
                if not self._queue:
                    raise RuntimeError("ScriptedEngine: no more scripted replies")
                text = self._queue.popleft()
        if isinstance(text, TokenReply):
            response = make_response(
                text.text, model=self.model, prompt_tokens=prompt_size(messages)
            )
            top_n = request.config.logprobs
            return response if top_n is None else _with_logprobs(response, text, top_n)
        return make_response(
            text,
            model=self.model,
            prompt_tokens=prompt_size(messages),
            finish_reason=getattr(text, "finish_reason", "stop"),
        )

    def complete(self, request: Request) -> Response:
        """Answer one request (the DSPy engine contract)."""
        messages = self._begin(request)
        if self.latency_s > 0:
            time.sleep(self.latency_s)
        return self._finish(messages, request)

    def async_twin(self) -> AsyncScriptedEngine:
        """The async engine sharing this engine's script, counters and injector."""
        return AsyncScriptedEngine(self)


class AsyncScriptedEngine(AsyncTwin[ScriptedEngine]):
    """Async twin of a :class:`ScriptedEngine` (same script, counters and injector)."""

    async def complete(self, request: Request) -> Response:
        """Answer one request without blocking the event loop during the latency."""
        messages = self.sync._begin(request)
        if self.sync.latency_s > 0:
            await asyncio.sleep(self.sync.latency_s)
        return self.sync._finish(messages, request)
