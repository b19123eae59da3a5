"""Failure injectors for the test engines, closing LiteLLM's HTTP clients, and re-exports of the
engine plumbing."""

from __future__ import annotations

from attune_judge.lm import make_response, prompt_size, request_key, request_messages

__all__ = [
    "close_http_clients",
    "make_response",
    "prompt_size",
    "rate_limit_error",
    "request_key",
    "request_messages",
    "timeout_error",
]


def rate_limit_error(message: str = "scripted rate limit") -> Exception:
    """An error that DSPy classifies as a rate limit (retryable), as a provider would raise."""
    from dspy.lm15 import RateLimitError

    return RateLimitError(message, provider="scripted", status=429)


def timeout_error(message: str = "scripted timeout") -> Exception:
    """An error that DSPy classifies as a timeout (retryable)."""
    from dspy.lm15 import TimeoutError as LMTimeout

    return LMTimeout(message, provider="scripted")


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
