"""The scripted and replay engines run through the real dspy.LM path (sync and async)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import dspy
import pytest
from dspy.utils.exceptions import LMRateLimitError

from attune_judge.lm import request_key
from attune_judge.testing import (
    MissingRecordingError,
    ReplayEngine,
    ScriptedEngine,
    rate_limit_error,
)


class QA(dspy.Signature):
    """Answer."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def _ask(lm: dspy.LM, question: str) -> str:
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return str(dspy.Predict(QA)(question=question).answer)


def test_queued_replies_come_back_in_order_and_are_counted() -> None:
    engine = ScriptedEngine(['{"answer": "one"}', '{"answer": "two"}'])
    lm = engine.lm()
    assert [_ask(lm, "a"), _ask(lm, "b")] == ["one", "two"]
    assert engine.calls == 2
    assert "[[ ## question ## ]]\nb" in engine.requests[1][-1]["content"]
    with pytest.raises(Exception, match="no more scripted replies"):
        _ask(lm, "c")


def test_responder_sees_the_messages() -> None:
    engine = ScriptedEngine(lambda msgs: json.dumps({"answer": msgs[-1]["content"][:20]}))
    assert _ask(engine.lm(), "hello").startswith("[[ ## question")
    assert engine.requests[0][0]["role"] == "system"


def test_injected_rate_limit_is_a_retryable_dspy_error() -> None:
    engine = ScriptedEngine(
        lambda m: '{"answer": "ok"}',
        fail=lambda m: rate_limit_error() if engine.calls == 1 else None,
    )
    lm = engine.lm()
    with pytest.raises(LMRateLimitError):
        _ask(lm, "q")
    assert _ask(lm, "q") == "ok"
    assert (engine.calls, engine.failures) == (2, 1)


def test_call_counter_is_thread_safe() -> None:
    engine = ScriptedEngine(lambda m: '{"answer": "x"}')
    lm = engine.lm()

    def worker(k: int) -> None:
        for i in range(20):
            _ask(lm, f"{k}-{i}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert engine.calls == 120


def test_async_calls_overlap_their_latency() -> None:
    # the injector runs when a call finishes (after its latency): the calls begun but not yet
    # finished at that moment are the calls in flight together; sequential calls give 1 each time
    finished: list[int] = []
    in_flight: list[int] = []

    def on_finish(messages: object) -> None:
        in_flight.append(engine.calls - len(finished))
        finished.append(1)

    engine = ScriptedEngine(lambda m: '{"answer": "x"}', latency_s=0.5, fail=on_finish)
    lm = engine.lm()
    program = dspy.Predict(QA)

    async def run() -> list[object]:
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            return await asyncio.gather(*(program.acall(question=str(i)) for i in range(8)))

    results = asyncio.run(run())
    assert len(results) == 8 and engine.calls == 8
    assert len(in_flight) == 8 and max(in_flight) == 8


def test_replay_returns_recorded_answers_and_refuses_unknown_requests(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    source = ScriptedEngine(lambda m: json.dumps({"answer": f"n{len(m[-1]['content'])}"}))
    recorder = ReplayEngine(path, mode="record", source=source)
    recorded = [_ask(recorder.lm(), q) for q in ("short", "a longer question")]
    recorder.save()
    assert recorder.recorded == 2

    replay = ReplayEngine(path)
    assert [_ask(replay.lm(), q) for q in ("short", "a longer question")] == recorded
    assert (replay.calls, replay.hits) == (2, 2)
    with pytest.raises(Exception, match="no recording for request") as err:
        _ask(replay.lm(), "never asked")
    assert str(path) in str(err.value)
    assert source.calls == 2  # replay never reached the source


def test_replay_async_and_record_missing(tmp_path: Path) -> None:
    path = tmp_path / "rec.json"
    source = ScriptedEngine(lambda m: '{"answer": "fresh"}')
    engine = ReplayEngine(path, mode="record_missing", source=source)
    program = dspy.Predict(QA)

    async def ask(q: str) -> str:
        with dspy.context(lm=engine.lm(), adapter=dspy.JSONAdapter()):
            return str((await program.acall(question=q)).answer)

    assert asyncio.run(ask("x")) == "fresh"
    assert asyncio.run(ask("x")) == "fresh"
    assert (source.calls, engine.hits) == (1, 1)


def test_replay_file_problems_are_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"rec\.json"):
        ReplayEngine(tmp_path / "rec.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}', "utf-8")
    with pytest.raises(ValueError, match="format must be"):
        ReplayEngine(bad)
    assert issubclass(MissingRecordingError, LookupError)


def test_request_key_depends_on_content_not_key_order() -> None:
    a = [{"role": "user", "content": "x"}]
    b = [{"content": "x", "role": "user"}]
    assert request_key(a) == request_key(b)
    assert request_key(a) != request_key([{"role": "user", "content": "y"}])
