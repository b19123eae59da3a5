"""The adapter's fast paths (per-signature memo, plain-text inputs written as is) change no
byte of the prompt: every message equals what an unmodified ``dspy.JSONAdapter`` formats."""

from __future__ import annotations

from typing import Any, Literal

import dspy
import pytest

from attune_judge.judges import ReferenceJudge
from attune_judge.lm import make_adapter
from attune_judge.rubrics import load_rubric
from attune_judge.testing import ScriptedEngine


class Rate(dspy.Signature):
    """Rate the reply."""

    conversation: str = dspy.InputField(desc="the chat so far")
    reply: str = dspy.InputField()
    notes: list[str] = dspy.InputField(desc="a list input")
    meta: dict[str, int] = dspy.InputField(desc="a mapping input")
    n: int = dspy.InputField()
    score: Literal[1, 2, 3, 4, 5] = dspy.OutputField(desc="1-5")
    rationale: str = dspy.OutputField()


INPUTS: dict[str, Any] = {
    "conversation": "user: I feel low.\nassistant: I'm sorry.",
    "reply": 'Tell me more — 😊 «quotes» and "double" quotes, {braces}',
    "notes": ["first", "second"],
    "meta": {"turns": 2},
    "n": 7,
}
DEMOS = [{**INPUTS, "reply": "An example.", "score": 4, "rationale": "fine"}]


@pytest.mark.parametrize("mode", ["auto", "json_schema", "json_object", "none"])
def test_messages_equal_dspy_json_adapter(mode: Any) -> None:
    ours, theirs = make_adapter(mode), dspy.JSONAdapter()
    for _ in range(3):  # the memoised second and third calls too
        assert ours.format(Rate, DEMOS, INPUTS) == theirs.format(Rate, DEMOS, INPUTS)
        assert ours.format(Rate, [], INPUTS) == theirs.format(Rate, [], INPUTS)


def test_a_changed_signature_is_formatted_anew() -> None:
    ours, theirs = make_adapter("auto"), dspy.JSONAdapter()
    ours.format(Rate, [], INPUTS)
    for changed in (
        Rate.with_instructions("Rate the reply harshly."),
        Rate.with_updated_fields("score", desc="from one to five"),
        Rate.append("extra", dspy.InputField(desc="one more"), type_=str),
    ):
        inputs = {**INPUTS, "extra": "x"}
        got = ours.format(changed, [], inputs)
        assert got == theirs.format(changed, [], inputs)
        assert got != ours.format(Rate, [], INPUTS)


def test_response_format_is_a_fresh_copy_per_call() -> None:
    adapter = make_adapter("json_schema")
    first: dict[str, Any] = {}
    adapter._prepare_response_format(None, first, Rate)
    first["response_format"]["json_schema"]["schema"]["properties"].clear()  # a caller mutates
    second: dict[str, Any] = {}
    adapter._prepare_response_format(None, second, Rate)
    properties = second["response_format"]["json_schema"]["schema"]["properties"]
    assert properties["score"]["enum"] == [1, 2, 3, 4, 5]


def test_the_reference_judges_prompt_is_dspy_s_own() -> None:
    import json

    from tests.runner._fakes import make_items

    def answer(messages: list[dict[str, str]]) -> str:
        criteria = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
        return json.dumps({**dict.fromkeys(criteria, 4), "rationale": "ok"})

    engine = ScriptedEngine(answer)
    judge = ReferenceJudge(load_rubric("attunebench-reference"), engine.lm())
    items = make_items(2, 2)
    for item in items:
        item.reference = "I'm sorry. Do you want to talk about it?"
        assert judge.judge(item).status == "ok"
    plain = dspy.JSONAdapter()
    for item, sent in zip(items, engine.requests, strict=True):
        expected = plain.format(judge.signature, [], judge._inputs(item))
        assert [m["content"] for m in sent] == [m["content"] for m in expected]


def test_model_metadata_is_looked_up_once_per_model_with_the_same_answer() -> None:
    """DSPy prices every answer by looking the model up in its metadata table (an unknown
    served name: a scan of every entry); the memo answers as DSPy does, once per model, and
    gives each caller its own copy."""
    from dspy.clients import costs, model_metadata

    from attune_judge.lm import LMSettings, resolve_lm

    def resolve() -> None:
        """Resolving a served model installs the memo (DSPy prices that model's answers)."""
        settings = LMSettings(lm="openai/served", api_base="http://127.0.0.1:9/v1")
        resolve_lm(settings, check_connection=False)

    resolve()
    resolve()  # idempotent: one wrapper
    memo = model_metadata.model_info
    assert getattr(memo, "attune_memo", False) and costs.model_info is memo
    original = memo.__wrapped__  # type: ignore[attr-defined]
    assert not getattr(original, "attune_memo", False)
    for provider, model in [("openai", "gpt-4o-mini"), ("openai", "served-name-nobody-has")]:
        first = memo(provider, model)
        assert first == original(provider, model)
        first["mutated"] = True  # a caller changing its copy changes nobody else's
        assert "mutated" not in memo(provider, model)
    assert memo("openai", "gpt-4o-mini").get("input_cost_per_token")  # a known model's price
    calls: list[str] = []

    def counting(provider: str, model: str, *, namespaces: object = None) -> object:
        calls.append(model)
        return original(provider, model, namespaces=namespaces)

    model_metadata.model_info = counting
    try:
        resolve()
        fresh = model_metadata.model_info
        for _ in range(3):
            fresh("openai", "another-served-name")
        assert calls == ["another-served-name"]
    finally:
        model_metadata.model_info = memo
        costs.model_info = memo
