"""Failure injectors for the test engines, and re-exports of the engine plumbing."""

from __future__ import annotations

from attune_judge.lm import make_response, prompt_size, request_key, request_messages

__all__ = [
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
