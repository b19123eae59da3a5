"""The embedded model's saved prompt states: reuse changes nothing but the work done.

Real SmolLM2 through llama-cpp-python. Per-criterion prompts of two judgments are asked
alternately (as calls of judgments in flight together can be); with :class:`PrefixStates`
each prompt's shared prefix is restored instead of evaluated again, and every token
probability equals the one of evaluating that prompt from an empty context (to 1e-6).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from attune_judge.data import JudgeItem

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None and os.environ.get("CI") != "true",
        reason="the local extra (llama-cpp-python) is not installed",
    ),
]


ED = "empathic-communication-empatheticdialogues"
LEND = "empathic-communication-lend_an_ear"
"""Lend an Ear's items share 20-30 tokens of framing beyond the system message."""


def _items(name: str, n: int) -> list[JudgeItem]:
    """The first ``n`` items of a shipped validation set."""
    from attune_judge.validate import VALIDATION_SETS, load_calibration_set

    # private unit: the embedded model's prefix-state cache and log-probabilities
    from attune_judge.validate._judge import _items as set_items

    spec = VALIDATION_SETS[name]
    humans = {r.item_id for r in load_calibration_set(spec.calibration) if spec.humans(r)}
    return set_items(spec, humans, n)


def _prompts(name: str = ED, n: int = 2) -> list[list[dict[str, Any]]]:
    """Two criteria's prompts for each of ``n`` judgments, alternating (A1, B1, A2, B2)."""
    from attune_judge.judges._criterion_prompt import criterion_messages
    from attune_judge.rubrics import load_rubric
    from attune_judge.validate import VALIDATION_SETS

    rubric = load_rubric(VALIDATION_SETS[name].rubric)
    per_item = [
        [
            criterion_messages(rubric, c, item, use_reference=False, prefill=True)
            for c in rubric.criteria[:2]
        ]
        for item in _items(name, n)
    ]
    return [p for pair in zip(*per_item, strict=True) for p in pair]


def _logprobs(response: Any) -> dict[int, float]:
    first = response.logprobs[0]
    return {t.token_id: t.logprob for t in first.top}


@pytest.mark.parametrize(("name", "n"), [(ED, 2), (LEND, 4)])
def test_restored_prefixes_give_the_probabilities_of_a_fresh_evaluation(name: str, n: int) -> None:
    from attune_judge.lm import default_gguf_path
    from attune_judge.lm._local import _load
    from attune_judge.lm._local_logprobs import PrefixStates, complete_with_logprobs

    llama, lock = _load(default_gguf_path(), 8192)
    prompts = _prompts(name, n)
    evaluated: list[int] = []
    real_eval = llama.eval

    def counting_eval(tokens: Any) -> None:
        evaluated.append(len(tokens))
        real_eval(tokens)

    with lock:
        llama.eval = counting_eval
        try:
            fresh = []
            for messages in prompts:
                llama.n_tokens = 0  # an empty context: the whole prompt is evaluated
                fresh.append(
                    complete_with_logprobs(llama, messages, top_n=20, max_tokens=1, model="m")
                )
            fresh_tokens = sum(evaluated)
            evaluated.clear()
            states = PrefixStates(max_bytes=256 << 20)
            reused = [
                complete_with_logprobs(
                    llama, messages, top_n=20, max_tokens=1, model="m", states=states
                )
                for messages in prompts
            ]
            reused_tokens = sum(evaluated)
        finally:
            del llama.eval
    # the second criterion of each judgment restored its judgment's prefix (the context held
    # the other judgment's prompt) and evaluated only its question
    assert states.restored == n
    # one state per judgment: each second question's state replaced its first one's
    assert len(states._states) == n
    assert reused_tokens < 0.6 * fresh_tokens, (fresh_tokens, reused_tokens)
    for a, b in zip(fresh, reused, strict=True):
        pa, pb = _logprobs(a), _logprobs(b)
        assert list(pa) == list(pb)  # the same 20 most probable tokens, in order
        for token, logprob in pa.items():
            assert pb[token] == pytest.approx(logprob, abs=1e-6)
        assert a.usage.input_tokens == b.usage.input_tokens


def test_states_are_dropped_least_recently_used_first_within_the_budget() -> None:
    from attune_judge.lm import default_gguf_path
    from attune_judge.lm._local import _load
    from attune_judge.lm._local_logprobs import PrefixStates, complete_with_logprobs

    llama, lock = _load(default_gguf_path(), 8192)
    prompts = _prompts()
    with lock:
        llama.n_tokens = 0
        probe = PrefixStates(max_bytes=256 << 20)
        complete_with_logprobs(llama, prompts[0], top_n=1, max_tokens=1, model="m", states=probe)
        one = probe._bytes
        assert one > 0 and len(probe._states) == 1
        # room for one state only: the second judgment's prefix replaces the first's
        states = PrefixStates(max_bytes=int(one * 1.5))
        for messages in prompts[:2]:
            complete_with_logprobs(llama, messages, top_n=1, max_tokens=1, model="m", states=states)
        assert len(states._states) == 1 and states._bytes <= states.max_bytes
        complete_with_logprobs(llama, prompts[2], top_n=1, max_tokens=1, model="m", states=states)
        assert states.restored == 0  # judgment A's prefix was dropped: evaluated again


def test_top_tokens_are_those_of_a_stable_full_sort() -> None:
    import numpy as np

    from attune_judge.lm._local_logprobs import _top

    rng = np.random.default_rng(0)
    for trial in range(300):
        x = rng.normal(size=400)
        if trial % 2:
            x = np.round(x, 1)  # many ties, some at the cut
        n = int(rng.integers(1, 40))
        assert _top(x, n) == np.argsort(-x, kind="stable")[:n].tolist()
    assert _top(np.zeros(3), 5) == [0, 1, 2]
    assert _top(np.zeros(3), 0) == []
