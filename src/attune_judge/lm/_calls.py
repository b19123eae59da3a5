"""What one DSPy program call sent and got: raw answer, finish reason, cache use, eviction.

DSPy hands its adapters the answer text only; whether the answer was cut off by the token
limit (``finish_reason == "length"``) and whether it came from the request cache are in the
LM's history entry. :class:`CallRecorder` is put into ``dspy.context(caller_modules=[...])``
for one program call, so DSPy records that call's history entries into it (and only that
call's: the context is per thread / per task).

:func:`evict` removes the cached answer of a recorded call from DSPy's request cache (memory
and disk), so that an answer that failed to parse is never replayed into a later run.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attune_judge.lm._handle import model_handle

if TYPE_CHECKING:
    import dspy

__all__ = [
    "CallRecorder",
    "RecordedCall",
    "count_engine_attempts",
    "evict",
    "memoize_model_metadata",
    "retry_after_of",
    "send_json_object_natively",
    "trim_history",
    "typed_call_kwargs",
]

log = logging.getLogger(__name__)


@dataclass
class RecordedCall:
    """One LM call of a program call, read from DSPy's history entry."""

    text: str | None
    """The answer text (first output)."""
    finish_reason: str | None
    """``stop``, ``length``, ... as the provider reported it (``None`` when unknown)."""
    cache_hit: bool
    """Whether the answer came from the request cache (no request was sent)."""
    messages: Any
    """The request messages (for eviction)."""
    kwargs: dict[str, Any]
    """The call's keyword arguments (for eviction)."""


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _finish_reason(response: Any) -> str | None:
    if isinstance(response, tuple | list):
        reasons = [_finish_reason(r) for r in response]
        return "length" if "length" in reasons else next((r for r in reasons if r), None)
    direct = _get(response, "finish_reason")
    if direct is not None:
        return str(getattr(direct, "value", direct))
    choices = _get(response, "choices") or []
    reasons = [_get(c, "finish_reason") for c in choices]
    reasons = [str(getattr(r, "value", r)) for r in reasons if r is not None]
    return "length" if "length" in reasons else (reasons[0] if reasons else None)


def _text(outputs: Any) -> str | None:
    if not outputs:
        return None
    first = outputs[0]
    if isinstance(first, str):
        return first
    value = _get(first, "text")
    return value if isinstance(value, str) else None


HISTORY_KEEP = 50
"""History entries DSPy keeps per LM, per program and globally under a run (the latest ones)."""


def trim_history(*owners: Any) -> None:
    """Keep the last :data:`HISTORY_KEEP` entries of DSPy's global history and of ``owners``
    (LMs, programs and their predictors).

    DSPy keeps up to 10,000 entries (prompt, messages, response) per LM, per calling module and
    globally; a long run paid for them in memory (~50 MB per 1,000 judgments) and in garbage
    collection time that grew with the run. A judgment's own record is taken from its
    :class:`CallRecorder`, never from these lists, so trimming them loses nothing of it;
    ``dspy.inspect_history()`` still shows the latest calls.
    """
    from dspy.clients import base_lm

    lists: list[Any] = [base_lm.GLOBAL_HISTORY]
    for owner in owners:
        lists.append(getattr(owner, "history", None))
        predictors = getattr(owner, "predictors", None)
        if callable(predictors):
            try:
                lists.extend(getattr(p, "history", None) for p in predictors())
            except Exception:  # pragma: no cover - not a DSPy module after all
                pass
    for history in lists:
        if isinstance(history, list) and len(history) > 2 * HISTORY_KEEP:
            # one statement: atomic under the GIL; entries recorded meanwhile are kept
            del history[: len(history) - HISTORY_KEEP]


def memoize_model_metadata() -> None:
    """Look a model up in DSPy's price and capability table once per process, not per call.

    DSPy prices every answer (advisory, beside our own :mod:`~attune_judge.runner._cost`):
    ``model_info`` looks the model up in its metadata table (thousands of entries), and a model
    the table does not name (a served name on vLLM or llama.cpp, say) is searched entry by
    entry, twice per call: about a third of the client's CPU per judgment over HTTP
    (``benchmarks/bench_fault_server.py``). The table is loaded once and never changes, so the
    answer for (provider, model, namespaces) is kept; each caller still gets its own copy.
    Idempotent; a DSPy without these names is left alone.
    """
    import copy
    import functools
    import threading

    try:
        from dspy.clients import capabilities, costs, model_metadata
    except ImportError:  # pragma: no cover - another DSPy layout
        return
    original = getattr(model_metadata, "model_info", None)
    if original is None or getattr(original, "attune_memo", False):
        return
    found: dict[Any, Any] = {}
    lock = threading.Lock()

    @functools.wraps(original)
    def model_info(provider: Any, model: Any, *, namespaces: Any = None) -> Any:
        key = (provider, model, None if namespaces is None else tuple(namespaces))
        try:
            hit = found[key]
        except (KeyError, TypeError):
            hit = original(provider, model, namespaces=namespaces)
            try:
                with lock:
                    found[key] = hit
            except TypeError:  # an unhashable argument: not kept
                return hit
        return copy.deepcopy(hit)

    model_info.attune_memo = True  # type: ignore[attr-defined]
    for module in (model_metadata, costs, capabilities):
        if getattr(module, "model_info", None) is original:
            module.model_info = model_info


def send_json_object_natively() -> bool:
    """Let DSPy's own HTTP engine send llama.cpp's ``{"type": "json_object", "schema": S}``.

    DSPy's canonical request has no slot for a ``json_object`` format's schema, so such calls
    went through LiteLLM and the OpenAI SDK: 13–16 ms of client CPU per judgment against
    3.4–6 ms on DSPy's engine in the same runs (``benchmarks/bench_fault_server.py``). Here the
    canonical request is built without the schema and without the token limit, and both ride
    its ``extensions``, which the engine writes into the body verbatim: the whole format, and
    the limit spelled ``max_tokens`` as LiteLLM sent it (llama.cpp's server does not read
    OpenAI's newer ``max_completion_tokens``). The request cache key is DSPy's key of the
    call, unchanged. Idempotent; ``False`` (LiteLLM stays the route) when this DSPy has no such
    step. ``resolve_lm`` uses it for servers named by ``api_base`` without a user or query in
    the URL (DSPy's engine takes neither); a hosted provider keeps LiteLLM, which knows which
    of its models want ``max_completion_tokens``.
    """
    import dataclasses

    try:
        from dspy.clients import execution
    except ImportError:  # pragma: no cover - another DSPy layout
        return False
    original = getattr(execution, "_canonical", None)
    if original is None:  # pragma: no cover - another DSPy layout
        return False
    if getattr(original, "attune_json_object", False):
        return True

    @functools.wraps(original)
    def canonical(call: Any, *, compat: Any = None) -> Any:
        legacy = getattr(call, "legacy", None) or {}
        fmt = legacy.get("response_format")
        if not (isinstance(fmt, dict) and fmt.get("type") == "json_object" and "schema" in fmt):
            return original(call, compat=compat)
        extensions: dict[str, Any] = {"response_format": fmt}
        plain = {**legacy, "response_format": {"type": "json_object"}}
        limit = plain.pop("max_tokens", None)
        limit = plain.pop("max_completion_tokens", limit)
        if limit is not None:
            extensions["max_tokens"] = limit
        request = original(dataclasses.replace(call, legacy=plain), compat=compat)
        config = request.config
        ext = {**(config.extensions or {}), **extensions}
        return dataclasses.replace(request, config=dataclasses.replace(config, extensions=ext))

    canonical.attune_json_object = True  # type: ignore[attr-defined]
    execution._canonical = canonical
    return True


_RECORDING: contextvars.ContextVar[CallRecorder | None] = contextvars.ContextVar(
    "attune_call_recorder", default=None
)
_PATCH_LOCK = threading.Lock()


def count_engine_attempts() -> bool:
    """Make DSPy count, on the :class:`CallRecorder` of the current program call, every
    request it hands to an engine (each attempt; a cached answer never reaches one).

    A request is recorded only when it was sent: a call that fails before its engine (reading
    the request cache, say) sent nothing, which DSPy's history cannot tell (it records only
    answers). Idempotent; ``False`` when this DSPy has no such step.
    """
    try:
        from dspy.clients import execution
    except ImportError:  # pragma: no cover - another DSPy layout
        return False
    with _PATCH_LOCK:
        for name in ("_attempt", "_aattempt"):
            original = getattr(execution, name, None)
            if original is None:  # pragma: no cover - another DSPy layout
                return False
            if getattr(original, "attune_counts", False):
                continue
            if inspect.iscoroutinefunction(original):

                async def counted_async(*args: Any, _original: Any = original, **kw: Any) -> Any:
                    _note_attempt()
                    return await _original(*args, **kw)

                counted: Any = functools.wraps(original)(counted_async)
            else:

                def counted_sync(*args: Any, _original: Any = original, **kw: Any) -> Any:
                    _note_attempt()
                    return _original(*args, **kw)

                counted = functools.wraps(original)(counted_sync)
            counted.attune_counts = True
            setattr(execution, name, counted)
    return True


def _note_attempt() -> None:
    recorder = _RECORDING.get()
    if recorder is not None:
        recorder.attempts += 1


class CallRecorder:
    """Collects the DSPy history entries of one program call (see the module docstring) and,
    inside :meth:`counting`, the requests it sent (:func:`count_engine_attempts`)."""

    def __init__(self) -> None:
        self.history: list[dict[str, Any]] = []
        self.attempts = 0
        self.counted = False

    @contextlib.contextmanager
    def counting(self) -> Iterator[CallRecorder]:
        """Count the requests sent by the program call run inside."""
        self.counted = count_engine_attempts()
        token = _RECORDING.set(self)
        try:
            yield self
        finally:
            _RECORDING.reset(token)

    @property
    def calls(self) -> list[RecordedCall]:
        """Every LM call recorded, in order."""
        out = []
        for entry in self.history:
            usage = entry.get("usage")
            out.append(
                RecordedCall(
                    text=_text(entry.get("outputs")),
                    finish_reason=_finish_reason(entry.get("response")),
                    # a cache hit carries no usage (DSPy clears it: no tokens were billed)
                    cache_hit=not usage,
                    messages=entry.get("messages"),
                    kwargs=dict(entry.get("kwargs") or {}),
                )
            )
        return out

    @property
    def truncated(self) -> bool:
        """Whether any answer was cut off by the token limit."""
        return any(c.finish_reason == "length" for c in self.calls)

    @property
    def last_text(self) -> str | None:
        """The answer text of the last call."""
        calls = self.calls
        return calls[-1].text if calls else None

    def requests_sent(self) -> int:
        """Requests that went to the model (cache hits excluded): the engine attempts counted
        inside :meth:`counting`, else the recorded calls that were not cache hits."""
        if self.counted:
            return self.attempts
        return sum(1 for c in self.calls if not c.cache_hit)


def evict(lm: dspy.BaseLM, call: RecordedCall | Any, *, asynchronous: bool) -> bool:
    """Remove ``call``'s answer from DSPy's request cache; ``True`` when an entry was removed.

    ``call`` is a :class:`RecordedCall` (a program call) or a ``dspy.lm15.Request`` sent with
    :func:`typed_call_kwargs`. The key is rebuilt with DSPy's own request preparation, as its
    executor does. Failures are logged and ignored (eviction is a safeguard, never a reason to
    fail a judgment).
    """
    try:
        import dspy
        from dspy.clients.execution import IGNORED_CACHE_KEYS, prepare

        if isinstance(call, RecordedCall):
            prepared = prepare(lm, None, call.messages, call.kwargs, asynchronous=asynchronous)
        else:
            prepared = prepare(lm, call, None, typed_call_kwargs(lm), asynchronous=asynchronous)
        if not prepared.cache:
            return False
        cache = dspy.cache
        key = cache.cache_key(prepared.key(lm, asynchronous), IGNORED_CACHE_KEYS)
        removed = False
        with cache._lock:
            if key in cache.memory_cache:
                cache.memory_cache.pop(key, None)
                removed = True
        disk = cache.disk_cache
        if isinstance(disk, dict):
            removed = disk.pop(key, None) is not None or removed
        else:
            removed = bool(disk.delete(key)) or removed
        return removed
    except Exception as exc:  # pragma: no cover - depends on DSPy internals
        log.warning("could not evict a failed answer from the request cache: %s", exc)
        return False


def typed_call_kwargs(lm: dspy.BaseLM) -> dict[str, Any]:
    """Keywords of a call of ``lm`` with a ``dspy.lm15.Request``: the server's cache salt
    (DSPy keys a typed request by the request alone, which names no server)."""
    salt = model_handle(lm).cache_salt
    return {} if salt is None else {"rollout_id": salt}


def _seconds(value: Any) -> float | None:
    """A Retry-After value (seconds or an HTTP date) as seconds, ``None`` when unusable."""
    import math
    from datetime import UTC, datetime
    from email.utils import parsedate_to_datetime

    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = float(value.strip())
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):
                return None
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            seconds = (when - datetime.now(UTC)).total_seconds()
            seconds = max(0.0, seconds)
    else:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def retry_after_of(exc: BaseException) -> float | None:
    """The server's ``Retry-After`` carried by ``exc`` (or an exception it wraps), in seconds."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        hint = _seconds(getattr(current, "retry_after", None))
        if hint is not None:
            return hint
        response = getattr(current, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None:
            try:
                hint = _seconds(headers.get("retry-after"))
            except Exception:  # pragma: no cover - exotic header objects
                hint = None
            if hint is not None:
                return hint
        current = current.__cause__ or current.__context__
    return None
