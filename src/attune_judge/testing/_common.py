"""Failure injectors for the test engines, closing LiteLLM's HTTP clients, and re-exports of the
engine plumbing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from attune_judge.lm import EngineBase as _Engine
from attune_judge.lm import (
    make_response,
    prompt_size,
    request_key,
    request_messages,
)

if TYPE_CHECKING:
    import dspy

__all__ = [
    "close_http_clients",
    "make_response",
    "prompt_size",
    "rate_limit_error",
    "request_key",
    "request_messages",
]


def rate_limit_error(message: str = "scripted rate limit") -> Exception:
    """An error that DSPy classifies as a rate limit (retryable), as a provider would raise."""
    from dspy.lm15 import RateLimitError

    return RateLimitError(message, provider="scripted", status=429)


def close_http_clients() -> None:
    """Close LiteLLM's cached HTTP clients of this process (call after talking to a loopback
    server in a test: their sockets would otherwise be garbage-collected open, a
    ``ResourceWarning`` that pytest turns into an error)."""
    import gc
    import inspect
    import sys
    import warnings

    litellm = sys.modules.get("litellm")
    if litellm is None:
        return
    cache = litellm.in_memory_llm_clients_cache
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        for client in list(cache.cache_dict.values()):
            close = getattr(client, "close", None)
            if callable(close) and not inspect.iscoroutinefunction(close):
                close()
        cache.flush_cache()
        gc.collect()


class EngineBase(_Engine):
    """What the sync test engines share besides :class:`attune_judge.lm.EngineBase`: a
    ``dspy.LM`` on the engine and its async twin."""

    default_model: ClassVar[str]

    def async_twin(self) -> Any:
        """The async engine sharing this engine's state."""
        raise NotImplementedError

    def lm(self, model: str | None = None, **kwargs: Any) -> dspy.LM:
        """A ``dspy.LM`` on this engine (sync and async), named ``model`` (default: the
        engine's ``default_model``).

        Defaults: ``cache=False``, ``temperature=0``, and ``num_retries=0`` so injected
        failures surface immediately.
        """
        import dspy

        kwargs.setdefault("cache", False)
        kwargs.setdefault("temperature", 0.0)
        kwargs.setdefault("num_retries", 0)
        name = model or self.default_model
        return dspy.LM(name, engine=self, async_engine=self.async_twin(), **kwargs)
