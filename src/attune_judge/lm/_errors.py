"""The one classifier of transient model errors: worth trying the same request again later.

Judges record an LM exception as an ``lm_error`` judgment whose ``details["retryable"]`` is
:func:`is_transient_error` of it; the runner's retry loop, the drafting loop and the batch
paths read that flag, so every layer agrees on what a transient failure is.
"""

from __future__ import annotations

__all__ = ["is_transient_error"]

_TRANSIENT_NAMES = (
    "RateLimit",
    "Timeout",
    "Connection",
    "ServiceUnavailable",
    "InternalServer",
    "Overloaded",
)
"""Parts of exception class names (any class of its MRO) that mark a transient failure, as
LiteLLM, the OpenAI SDK and DSPy's lm15 engines name them (``RateLimitError``,
``APITimeoutError``, ``APIConnectionError``, ``ServiceUnavailableError``, ...)."""


def is_transient_error(exc: BaseException) -> bool:
    """Rate limits, timeouts, server errors (HTTP 429 or 5xx) and connection failures.

    >>> is_transient_error(TimeoutError()), is_transient_error(ValueError("bad schema"))
    (True, False)
    """
    from dspy.utils.exceptions import is_retryable_lm_error

    if isinstance(exc, Exception) and is_retryable_lm_error(exc):
        return True
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500):
        return True
    names = " ".join(c.__name__ for c in type(exc).__mro__)
    return any(part in names for part in _TRANSIENT_NAMES)
