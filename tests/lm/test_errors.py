"""The one classifier of transient model errors, on the exceptions providers really raise.

The exceptions are built inside the tests (LiteLLM is imported there, not at collection: it
is the slowest import of the suite)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from attune_judge.data import ChatMessage, JudgeItem
from attune_judge.judges import build_judge
from attune_judge.lm import is_transient_error
from attune_judge.testing import ScriptedEngine, rate_limit_error


def _litellm(name: str, message: str) -> Callable[[], BaseException]:
    def make() -> BaseException:
        import litellm

        return getattr(litellm, name)(message, llm_provider="openai", model="m")  # type: ignore[no-any-return]

    make.__name__ = name
    return make


def _builtin(kind: type[BaseException], message: str) -> Callable[[], BaseException]:
    def make() -> BaseException:
        return kind(message)

    make.__name__ = kind.__name__
    return make


def _dspy_rate_limit() -> BaseException:
    from dspy.lm15 import RateLimitError

    return RateLimitError("slow down", provider="openai", status=429)


@pytest.mark.parametrize(
    "make",
    [
        _dspy_rate_limit,
        _litellm("RateLimitError", "429"),
        _litellm("Timeout", "timed out"),
        _litellm("APIConnectionError", "refused"),
        _litellm("ServiceUnavailableError", "503"),
        _litellm("InternalServerError", "500"),
        _litellm("BadGatewayError", "502"),
        _builtin(TimeoutError, "read timed out"),
        _builtin(ConnectionRefusedError, "refused"),
    ],
    ids=lambda m: m.__name__,
)
def test_transient_errors(make: Callable[[], BaseException]) -> None:
    assert is_transient_error(make())


@pytest.mark.parametrize(
    "make",
    [
        _litellm("AuthenticationError", "bad key"),
        _litellm("BadRequestError", "bad request"),
        _litellm("NotFoundError", "no such model"),
        _builtin(ValueError, "schema"),
        _builtin(KeyError, "choices"),
    ],
    ids=lambda m: m.__name__,
)
def test_permanent_errors(make: Callable[[], BaseException]) -> None:
    assert not is_transient_error(make())


def test_the_judges_use_the_same_classifier() -> None:
    # a judge records an LM failure as retryable exactly when the classifier calls it transient
    item = JudgeItem(
        item_id="c1:1:m",
        conversation_id="c1",
        context=[ChatMessage(role="user", content="I failed my driving test again.")],
        candidate="Just try again.",
        candidate_model="m",
        reference="That sounds discouraging.",
    )
    for error in (rate_limit_error(), ValueError("schema")):
        engine = ScriptedEngine(lambda m: "{}", fail=lambda m, e=error: e)  # type: ignore[misc]
        judgment = build_judge("attunebench-reference", engine.lm()).judge(item)
        assert judgment.status == "lm_error"
        assert judgment.details["retryable"] is is_transient_error(error)
    assert is_transient_error(rate_limit_error()) and not is_transient_error(ValueError("schema"))
