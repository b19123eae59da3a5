"""Shared machinery of the DSPy judges: identity, prompts' data fields, calling, failures.

A judge call goes through :func:`call_program`, which runs a DSPy module under the judge's
LM and JSON adapter, tracks token usage, and turns every model-side problem into data:
an unparseable answer into ``parse_error`` (raw text kept, ``reason`` one of
:data:`attune_judge.lm.PARSE_REASONS`; an answer cut off by the token limit is ``truncated``
even when its fields happen to parse), an LM exception into ``lm_error`` (``retryable`` for
rate limits, timeouts and connection failures, with the server's ``Retry-After`` when it sent
one). A failed answer is evicted from the request cache, so it is never replayed into a run.
Untrusted text enters prompts through :func:`format_conversation` and
:func:`attune_judge.lm.untrusted` (see :mod:`attune_judge.lm._untrusted`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attune_judge.data import ChatMessage, JudgeItem, Judgment, TokenUsage
from attune_judge.errors import UserError
from attune_judge.lm import CallRecorder, evict, retry_after_of, trim_history, untrusted
from attune_judge.lm._errors import is_transient_error
from attune_judge.lm._timing import add_request

if TYPE_CHECKING:
    import dspy

__all__ = [
    "CallOutcome",
    "acall_program",
    "add_usage",
    "call_program",
    "failure_judgment",
    "format_conversation",
    "is_retryable",
    "item_judgment",
    "refusal_judgment",
]

_ROLE_LABEL = {"user": "Person", "assistant": "Assistant", "system": "System"}


def format_conversation(context: list[ChatMessage]) -> str:
    """The conversation as plain text (``Person: ...`` / ``Assistant: ...``), one block each.

    Message texts are untrusted: field markers and speaker-like lines inside them are
    neutralised (:func:`attune_judge.lm.untrusted`), so only these labels start a turn.
    """
    return "\n\n".join(f"{_ROLE_LABEL[m.role]}: {untrusted(m.content)}" for m in context)


is_retryable = is_transient_error
"""Whether an LM exception is transient (:func:`attune_judge.lm.is_transient_error`)."""


@dataclass
class CallOutcome:
    """What one program call produced: a prediction, or why not."""

    prediction: Any = None
    """The DSPy prediction (``None`` on failure)."""
    status: str = "ok"
    """``ok``, ``parse_error`` or ``lm_error``."""
    error: str | None = None
    """Error text on failure."""
    raw: str | None = None
    """The raw model answer when it could not be parsed."""
    retryable: bool = False
    """True for transient LM failures."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Tokens spent (cache hits cost none)."""
    reason: str | None = None
    """Why parsing failed (``truncated``, ``multiple_objects``, ...; see ``PARSE_REASONS``)."""
    requests: int = 1
    """Requests sent to the model (0 when the answer came from the request cache)."""
    retry_after_s: float | None = None
    """The server's ``Retry-After`` (seconds) on a rate limit or overload, if it sent one."""


def _usage(tracker: Any, calls: int) -> TokenUsage:
    prompt = completion = 0
    for entry in tracker.get_total_tokens().values():
        prompt += int(entry.get("prompt_tokens") or 0)
        completion += int(entry.get("completion_tokens") or 0)
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, calls=calls)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The ``Retry-After`` the server sent with ``exc`` (seconds), if any."""
    return retry_after_of(exc)


def _failure(exc: Exception, recorder: Any) -> CallOutcome:
    from dspy.utils.exceptions import AdapterParseError

    if isinstance(exc, AdapterParseError):
        raw = exc.lm_response if isinstance(exc.lm_response, str) else None
        if raw is None:
            raw = recorder.last_text if recorder is not None else None
        reason = getattr(exc, "attune_reason", None) or (
            "empty" if not (raw or "").strip() else "not_json"
        )
        message = str(getattr(exc, "attune_message", None) or exc)
        if recorder is not None and recorder.truncated:
            reason, message = "truncated", "the answer was cut off by the token limit"
        return CallOutcome(status="parse_error", error=_short(message), raw=raw, reason=reason)
    return CallOutcome(
        status="lm_error",
        error=f"{type(exc).__name__}: {_short(str(exc))}",
        retryable=is_transient_error(exc),
        retry_after_s=retry_after_seconds(exc),
    )


def _failed_call(
    exc: Exception,
    tracker: Any,
    recorder: Any = None,
    lm: dspy.BaseLM | None = None,
    asynchronous: bool = False,
) -> CallOutcome:
    outcome = _failure(exc, recorder)
    outcome.usage = _usage(tracker, 1)
    if recorder is not None and (recorder.calls or recorder.counted):
        # counted: 0 when the call failed before any request was sent (issue 44)
        outcome.requests = recorder.requests_sent()
    if outcome.status == "parse_error" and recorder is not None and lm is not None:
        _evict_all(lm, recorder, asynchronous)
    return outcome


def _evict_all(lm: dspy.BaseLM, recorder: Any, asynchronous: bool) -> None:
    for call in recorder.calls:
        evict(lm, call, asynchronous=asynchronous)


def _succeeded(
    prediction: Any, tracker: Any, recorder: Any, lm: dspy.BaseLM, asynchronous: bool
) -> CallOutcome:
    usage = _usage(tracker, 1)
    raw = recorder.last_text
    requests = recorder.requests_sent() if recorder.calls or recorder.counted else 1
    if recorder.truncated:
        _evict_all(lm, recorder, asynchronous)
        return CallOutcome(
            status="parse_error",
            error="truncated: the answer was cut off by the token limit (finish_reason=length)",
            raw=raw,
            reason="truncated",
            usage=usage,
            requests=requests,
        )
    return CallOutcome(prediction=prediction, usage=usage, raw=raw, requests=requests)


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " ..."


def attempt(call: Callable[[], Any]) -> tuple[Any, Exception | None]:
    """``(call(), None)``, or ``(None, exc)`` for any exception but a ``UserError``
    (configuration), which propagates."""
    try:
        return call(), None
    except UserError:
        raise
    except Exception as exc:
        return None, exc


async def aattempt(call: Callable[[], Awaitable[Any]]) -> tuple[Any, Exception | None]:
    """Async :func:`attempt` (awaits ``call()``)."""
    try:
        return await call(), None
    except UserError:
        raise
    except Exception as exc:
        return None, exc


@contextmanager
def _program_call(program: Any, lm: dspy.BaseLM, adapter: Any, asynchronous: bool) -> Iterator[Any]:
    """The context of one program call; yields ``settle(prediction, exc)``, which times it,
    trims the LM's history and makes the :class:`CallOutcome`."""
    import dspy
    from dspy.utils.usage_tracker import track_usage

    recorder = CallRecorder()
    with (
        dspy.context(lm=lm, adapter=adapter, caller_modules=[recorder]),
        track_usage() as tracker,
        recorder.counting(),
    ):
        started = time.perf_counter()

        def settle(prediction: Any, exc: Exception | None) -> CallOutcome:
            add_request(time.perf_counter() - started)
            trim_history(lm, program)
            if exc is not None:
                return _failed_call(exc, tracker, recorder, lm, asynchronous)
            return _succeeded(prediction, tracker, recorder, lm, asynchronous)

        yield settle


def call_program(program: Any, lm: dspy.BaseLM, adapter: Any, **inputs: Any) -> CallOutcome:
    """Run ``program(**inputs)`` under ``lm`` and ``adapter``; failures become outcomes.

    ``UserError`` (configuration) propagates; every other exception is recorded.
    """
    with _program_call(program, lm, adapter, False) as settle:
        outcome: CallOutcome = settle(*attempt(lambda: program(**inputs)))
        return outcome


async def acall_program(program: Any, lm: dspy.BaseLM, adapter: Any, **inputs: Any) -> CallOutcome:
    """Async :func:`call_program` (``program.acall``; the LM's async engine)."""
    with _program_call(program, lm, adapter, True) as settle:
        outcome: CallOutcome = settle(*await aattempt(lambda: program.acall(**inputs)))
        return outcome


def add_usage(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    """Sum of two usages."""
    return TokenUsage(
        prompt_tokens=a.prompt_tokens + b.prompt_tokens,
        completion_tokens=a.completion_tokens + b.completion_tokens,
        calls=a.calls + b.calls,
    )


def item_judgment(
    item: JudgeItem, judge_id: str, started: float, *, usage: TokenUsage, **fields: Any
) -> Judgment:
    """A Judgment of ``item`` by ``judge_id``: ids from the item, latency since ``started``.

    ``fields`` are the other ``Judgment`` fields (status, scores, details, ...).
    """
    return Judgment(
        item_id=item.item_id,
        judge_id=judge_id,
        conversation_id=item.conversation_id,
        candidate_model=item.candidate_model,
        usage=usage,
        latency_s=time.perf_counter() - started,
        **fields,
    )


def outcome_judgment(
    item: JudgeItem,
    judge_id: str,
    started: float,
    outcome: CallOutcome,
    details: dict[str, Any],
    reasoning: bool,
    **fields: Any,
) -> Judgment:
    """An ok Judgment from one call's ``outcome``: its usage and raw text, and ``details`` with
    the call's requests (and the model's reasoning when the judge asked for it)."""
    details["requests"] = outcome.requests
    if reasoning:
        details["reasoning"] = getattr(outcome.prediction, "reasoning", None)
    fields.update(usage=outcome.usage, raw_output=outcome.raw, details=details)
    return item_judgment(item, judge_id, started, **fields)


def failure_judgment(
    item: JudgeItem,
    judge_id: str,
    outcome: CallOutcome,
    started: float,
    details: dict[str, Any] | None = None,
) -> Judgment:
    """A non-ok Judgment from a failed outcome (raw text kept, never a default score)."""
    extra = dict(details or {})
    if outcome.status == "lm_error":
        extra["retryable"] = outcome.retryable
        if outcome.retry_after_s is not None:
            extra["retry_after_s"] = outcome.retry_after_s
    if outcome.status == "parse_error":
        extra["reason"] = outcome.reason or "invalid_value"
    extra["requests"] = outcome.requests
    return item_judgment(
        item,
        judge_id,
        started,
        usage=outcome.usage,
        status=outcome.status,
        error=outcome.error,
        raw_output=outcome.raw,
        details=extra,
    )


def refusal_judgment(item: JudgeItem, judge_id: str, reason: str, message: str) -> Judgment:
    """A Judgment for an item the judge cannot judge (e.g. no reference): status ``refused``."""
    return Judgment(
        item_id=item.item_id,
        judge_id=judge_id,
        conversation_id=item.conversation_id,
        candidate_model=item.candidate_model,
        status="refused",
        error=message,
        details={"reason": reason, "retryable": False},
        latency_s=0.0,
    )
