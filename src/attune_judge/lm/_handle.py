"""What attune-judge knows about a ``dspy.LM`` it resolved: one typed handle per LM object.

:func:`attune_judge.lm.resolve_lm` (and :func:`attune_judge.lm.local_lm`) record a frozen
:class:`ModelHandle` for the LM they return — the model string the user gave, how judges ask
it for JSON, its request timeout, whether its engine continues a trailing assistant message
(prefill) and reports logprobs in-process. Judges read it with :func:`model_handle`; an LM
built elsewhere (a test engine, a user's own ``dspy.LM``) gets the defaults derived from its
``model``. The registry is keyed by the LM object and holds it weakly, so a handle lives as
long as its LM and the ``dspy.LM`` class is left as DSPy made it.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from attune_judge._secrets import redact_url
from attune_judge.lm._settings import ResponseFormat

if TYPE_CHECKING:
    import dspy

__all__ = [
    "ModelHandle",
    "lm_model_string",
    "lm_response_format",
    "lm_spec",
    "model_handle",
    "register_model",
    "server_identity",
    "server_of",
]

_LM = TypeVar("_LM")


@dataclass(frozen=True)
class ModelHandle:
    """attune-judge's facts about one LM (see the module docstring)."""

    model: str
    """The model string the user gave (``local``, ``openai/...``)."""
    response_format: ResponseFormat = "auto"
    """How judges ask this model for JSON (see :mod:`attune_judge.lm._adapter`)."""
    timeout_s: float | None = None
    """Seconds one request may take (``None``: not set by attune-judge)."""
    prefill: bool = False
    """The engine continues a trailing assistant message and reports token logprobs
    (the embedded model): per-criterion judges default to expected scores on it."""
    server: str | None = None
    """The server the LM answers from (its ``api_base``, credentials redacted; ``None`` for a
    provider's own endpoint or the embedded model): part of the judge id and, through
    :data:`ModelHandle.cache_salt`, of every request's cache key."""
    cache_salt: int | None = None
    """DSPy's ``rollout_id`` that keeps the cached answers of one server apart from another's
    (DSPy's cache key leaves ``api_base`` out); ``None`` without a server."""


_HANDLES: weakref.WeakKeyDictionary[Any, ModelHandle] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def register_model(lm: _LM, handle: ModelHandle | None = None, **changes: Any) -> _LM:
    """Record ``handle`` for ``lm`` (or change fields of its current handle); returns ``lm``.

    >>> class FakeLM:
    ...     model = "openai/x"
    >>> lm = register_model(FakeLM(), response_format="json_schema")
    >>> model_handle(lm).model, model_handle(lm).response_format, model_handle(lm).prefill
    ('openai/x', 'json_schema', False)
    """
    with _LOCK:
        base = handle or _HANDLES.get(lm) or _default(lm)
        _HANDLES[lm] = replace(base, **changes) if changes else base
    return lm


def model_handle(lm: dspy.BaseLM) -> ModelHandle:
    """The handle recorded for ``lm``, else the defaults for an LM attune-judge did not build."""
    try:
        with _LOCK:
            found = _HANDLES.get(lm)
    except TypeError:  # an object that cannot be a weak key (unhashable): never registered
        found = None
    return found if found is not None else _default(lm)


def _default(lm: dspy.BaseLM) -> ModelHandle:
    return ModelHandle(model=str(getattr(lm, "model", None) or "unknown"))


_UNSET = object()
_IDENTITY: contextvars.ContextVar[Any] = contextvars.ContextVar("attune_server", default=_UNSET)


@contextlib.contextmanager
def server_identity(api_base: str | None) -> Iterator[None]:
    """LMs resolved inside answer *as* ``api_base`` (their judge id and cache keys), whatever
    address they are sent to: the batch collector stands in for the real server this way."""
    token = _IDENTITY.set(api_base)
    try:
        yield
    finally:
        _IDENTITY.reset(token)


def server_of(api_base: str | None) -> tuple[str | None, int | None]:
    """The recorded server (credentials redacted) and its cache salt (DSPy ``rollout_id``)."""
    chosen = _IDENTITY.get()
    base = api_base if chosen is _UNSET else chosen
    if base is None:
        return None, None
    shown = redact_url(str(base).rstrip("/"))
    return shown, int(hashlib.sha256(shown.encode("utf-8")).hexdigest()[:12], 16)


def lm_model_string(lm: dspy.BaseLM) -> str:
    """The model string a user gave for ``lm`` (``local``, ``openai/...``), else ``lm.model``."""
    return model_handle(lm).model


def lm_response_format(lm: dspy.BaseLM) -> ResponseFormat:
    """The JSON policy recorded for ``lm`` by :func:`resolve_lm` (``auto`` otherwise)."""
    return model_handle(lm).response_format


def lm_spec(lm: dspy.BaseLM) -> dict[str, Any]:
    """JSON-serialisable identity of ``lm`` for judge specs: model string (the served name),
    decoding, response format and, for an OpenAI-compatible server, its address."""
    kwargs = dict(getattr(lm, "kwargs", {}) or {})
    spec = {
        "lm": lm_model_string(lm),
        "temperature": kwargs.get("temperature"),
        "max_tokens": kwargs.get("max_tokens", kwargs.get("max_completion_tokens")),
        "seed": kwargs.get("seed"),
        "response_format": lm_response_format(lm),
    }
    server = model_handle(lm).server
    if server is not None:  # absent otherwise, so hosted and embedded judges keep their ids
        spec["api_base"] = server
    return spec
