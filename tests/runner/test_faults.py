"""Every fault of a real OpenAI-compatible server, counted exactly (FaultServer on loopback).

The judge goes through the real path: ``resolve_lm("openai/...", api_base=...)`` → DSPy →
DSPy's native client (``json_object``, ``json_schema``) or LiteLLM (``json_object`` with a user
or query in the URL; ``litellm`` below) → HTTP. The server's own
log is the independent record: requests sent must equal attempts recorded, and no fault class
may ever end as an ``ok`` judgment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from attune_judge.data import ChatMessage, JudgeItem, Judgment, read_jsonl
from attune_judge.judges import build_judge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.runner import RetryPolicy, ScoreConfig, Task, judge_with_retries, run_score
from attune_judge.testing import BAD_ANSWER_FAULTS, FAULTS, FaultServer
from tests._http_clients import _closed_http_clients
from tests.runner._real import write_items

pytestmark = pytest.mark.timeout(120)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test

LM_ERROR_FAULTS = {"rate_limit", "server_error", "overloaded", "hang"}


def _item(n: int = 1) -> JudgeItem:
    return JudgeItem(
        item_id=f"i{n}",
        conversation_id="c",
        turn=1,
        context=[ChatMessage(role="user", content="I failed my test again.")],
        candidate=f"CAND-{n}-END",
        candidate_model="m",
        reference="That sounds hard.",
    )


def _judge(
    server: FaultServer, fmt: str = "json_object", engine: str | None = None, **kwargs: Any
) -> Any:
    kwargs.setdefault("cache", False)
    kwargs.setdefault("timeout", 5.0)
    lm = resolve_lm(
        LMSettings(lm="openai/fake", api_base=server.url, response_format=fmt, **kwargs),
        engine=engine,
    )
    return build_judge("attunebench-reference", lm)


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """DSPy's request cache in a fresh directory for one test: ``ATTUNE_CACHE_DIR``, which every
    model built by ``resolve_lm`` follows (global state restored afterwards)."""
    import dspy

    saved = dspy.cache
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))
    try:
        yield tmp_path / "cache"
    finally:
        dspy.cache = saved


@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "hang"])
@pytest.mark.parametrize("fmt", ["json_object", "json_schema", "litellm"])
def test_each_fault_is_one_request_and_never_ok(fault: str, fmt: str) -> None:
    with FaultServer(choose=lambda n, text, repeat: fault) as server:
        route = {"engine": "litellm"} if fmt == "litellm" else {}
        result = _judge(server, "json_object" if route else fmt, **route).judge(_item())
        assert server.requests == 1  # no hidden retries in DSPy, LiteLLM or the SDK
    assert result.details["requests"] == 1
    if fault == "ok":
        assert result.status == "ok" and len(result.scores) == 4
        return
    assert result.status != "ok" and result.scores == {} and result.overall is None
    if fault in BAD_ANSWER_FAULTS:
        assert result.status == "parse_error"
        assert result.raw_output is not None or fault == "empty"
        expected = {
            "truncated": "truncated",
            "cut": "truncated",
            "two_objects": "multiple_objects",
            "text_outside": "text_outside",
            "empty": "empty",
        }.get(fault)
        if expected is not None:
            assert result.details["reason"] == expected
        elif fault != "garbage":
            assert result.details["reason"] == "invalid_value"
    else:
        assert result.status == "lm_error" and result.details["retryable"] is True
        if fault in ("rate_limit", "overloaded"):
            assert result.details["retry_after_s"] == 1.0  # the server's Retry-After


def test_a_hung_request_is_cut_by_the_timeout() -> None:
    with FaultServer(choose=lambda n, text, repeat: "hang", hang_s=20) as server:
        result = _judge(server, timeout=0.5).judge(_item())
        assert server.requests == 1
        # the client gave up while the server was still holding the request: a hang answers
        # 500 only after 20 s, so an error naming a timeout can only come from the 0.5 s timeout
    assert result.status == "lm_error" and result.details["retryable"] is True
    # the error is the client's read timeout (0.5 s), not the 500 the server sends after 20 s
    assert "timed out" in result.error and "0.5s" in result.error


def test_retry_after_is_honoured_and_capped() -> None:
    waits: list[float] = []
    plan = {0: "rate_limit", 1: "rate_limit", 2: "ok"}
    with FaultServer(choose=lambda n, text, repeat: plan[repeat], retry_after_s=7) as server:
        judgment = judge_with_retries(
            Task(_item(), _judge(server)), RetryPolicy(max_retries=5, seed=0), sleep=waits.append
        )
        assert server.requests == 3
    assert waits == [7.0, 7.0]
    assert judgment.status == "ok" and judgment.details["attempts"] == 3
    assert judgment.details["requests"] == 3

    waits.clear()
    with FaultServer(choose=lambda n, text, repeat: plan[repeat], retry_after_s=600) as server:
        judge_with_retries(
            Task(_item(), _judge(server)), RetryPolicy(max_retries=5), sleep=waits.append
        )
    assert waits == [60.0, 60.0]  # capped


def test_parse_retries_ask_again_then_record_the_failure() -> None:
    with FaultServer(choose=lambda n, text, repeat: "two_objects") as server:
        judgment = judge_with_retries(
            Task(_item(), _judge(server)), RetryPolicy(parse_retries=2), sleep=lambda s: None
        )
        assert server.requests == 3
    assert judgment.status == "parse_error" and judgment.details["attempts"] == 3
    assert judgment.details["requests"] == 3


MIX = {
    "rate_limit": 0.15,
    "server_error": 0.05,
    "overloaded": 0.03,
    "garbage": 0.05,
    "two_objects": 0.05,
    "text_outside": 0.03,
    "truncated": 0.04,
    "cut": 0.03,
    "bool_score": 0.04,
    "hex_score": 0.04,
    "out_of_scale": 0.03,
    "fraction": 0.03,
    "empty": 0.02,
}


def _run(tmp: Path, server: FaultServer, name: str, *, cache: bool) -> list[Judgment]:
    config = ScoreConfig(
        data=tmp / "items.jsonl",
        out=tmp / name,
        lm="openai/fake",
        max_concurrency=8,
        max_retries=2,
        retry_base_delay_s=0.0,
        max_failure_rate=1.0,
        quiet=True,
        B=200,
        lm_settings=LMSettings(api_base=server.url),
    )
    lm = resolve_lm(
        LMSettings(
            lm="openai/fake",
            api_base=server.url,
            response_format="json_object",
            cache=cache,
            timeout=5.0,
        )
    )
    result = run_score(config, judges=[build_judge("attunebench-reference", lm)])
    assert result.complete
    return read_jsonl(tmp / name / "judgments.jsonl", Judgment)


def test_mixed_faults_are_counted_exactly_and_never_scored(
    tmp_path: Path, isolated_cache: Path
) -> None:
    items = write_items(tmp_path / "items.jsonl", n_conv=15, n_turns=4)  # 120 items
    # one server (the server is part of the cache key): faulty now, always ok below
    with FaultServer(MIX, seed=3, retry_after_s=0) as server:
        judgments = _run(tmp_path, server, "run1", cache=True)
        log = list(server.log)
        server.mix = {}  # now always ok
        again = _run(tmp_path, server, "run2", cache=True)
        second = list(server.log)[len(log) :]
    assert len(judgments) == len(items) == len({j.item_id for j in judgments})
    # requests sent == attempts recorded == requests recorded
    assert len(log) == sum(j.details["attempts"] for j in judgments)
    assert len(log) == sum(j.details["requests"] for j in judgments)
    by_candidate = {it.item_id: it.candidate for it in items}
    seen: Counter[str] = Counter()
    for j in judgments:
        served = [r for r in log if by_candidate[j.item_id] in r.user_text]
        assert len(served) == j.details["attempts"]
        last = served[-1].fault
        seen[last] += 1
        if j.status == "ok":
            assert last == "ok"  # no fault class ever produces an ok judgment
        elif last in BAD_ANSWER_FAULTS:
            assert (j.status == "parse_error" and j.raw_output is not None) or last == "empty"
        else:
            assert last in LM_ERROR_FAULTS and j.status == "lm_error"
    # the mix really exercised failures of both kinds
    assert sum(seen[f] for f in BAD_ANSWER_FAULTS) > 0 and seen["ok"] > 0
    assert Counter(r.fault for r in log)["rate_limit"] > 0

    # a new run directory on the same cache: ok answers come from the cache, but no failed
    # answer is ever replayed -- every item that was not ok is asked again
    first_status = {j.item_id: j.status for j in judgments}
    asked = {i for i, cand in by_candidate.items() if any(cand in r.user_text for r in second)}
    assert asked == {i for i, s in first_status.items() if s != "ok"}
    assert all(j.status == "ok" for j in again)
    assert len(second) == sum(j.details["requests"] for j in again)
