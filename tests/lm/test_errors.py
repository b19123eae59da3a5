"""The one classifier of transient model errors, on the exceptions providers really raise."""

from __future__ import annotations

import litellm
import pytest
from dspy.lm15 import RateLimitError

from attune_judge.judges import is_retryable
from attune_judge.lm import is_transient_error
from attune_judge.runner import is_transient


@pytest.mark.parametrize(
    "exc",
    [
        RateLimitError("slow down", provider="openai", status=429),
        litellm.RateLimitError("429", llm_provider="openai", model="m"),
        litellm.Timeout("timed out", model="m", llm_provider="openai"),
        litellm.APIConnectionError("refused", llm_provider="openai", model="m"),
        litellm.ServiceUnavailableError("503", llm_provider="openai", model="m"),
        litellm.InternalServerError("500", llm_provider="openai", model="m"),
        litellm.BadGatewayError("502", llm_provider="openai", model="m"),
        TimeoutError("read timed out"),
        ConnectionRefusedError("refused"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_transient_errors(exc: BaseException) -> None:
    assert is_transient_error(exc)


@pytest.mark.parametrize(
    "exc",
    [
        litellm.AuthenticationError("bad key", llm_provider="openai", model="m"),
        litellm.BadRequestError("bad request", model="m", llm_provider="openai"),
        litellm.NotFoundError("no such model", model="m", llm_provider="openai"),
        ValueError("schema"),
        KeyError("choices"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_permanent_errors(exc: BaseException) -> None:
    assert not is_transient_error(exc)


def test_the_judges_and_the_runner_use_the_same_classifier() -> None:
    assert is_retryable is is_transient_error
    assert is_transient is is_transient_error
