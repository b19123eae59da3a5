from __future__ import annotations

import threading
import time

import pytest

from attune_judge.runner import RetryPolicy, Task, ThreadExecutor, judge_with_retries
from tests.runner._fakes import FakeJudge, make_items


def test_thread_executor_never_exceeds_max_concurrency_and_reaches_it() -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def work(x: int) -> int:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.01)
        with lock:
            state["now"] -= 1
        return x * 2

    out = list(ThreadExecutor(4).map_unordered(work, range(40)))
    assert sorted(out) == [2 * x for x in range(40)]
    assert state["peak"] == 4


def test_stop_event_starts_no_new_task_but_yields_running_ones() -> None:
    stop = threading.Event()
    started: list[int] = []

    def work(x: int) -> int:
        started.append(x)
        time.sleep(0.005)
        return x

    got = []
    for x in ThreadExecutor(2).map_unordered(work, range(100), stop=stop):
        got.append(x)
        if len(got) == 3:
            stop.set()
    # at most 2 tasks were in flight when stop was set: every started task was yielded
    assert sorted(got) == sorted(started)
    assert 3 <= len(got) <= 3 + 2


def test_an_exception_in_a_task_propagates() -> None:
    def work(x: int) -> int:
        if x == 5:
            raise ValueError("bug")
        return x

    with pytest.raises(ValueError, match="bug"):
        list(ThreadExecutor(3).map_unordered(work, range(10)))


def test_backoff_delays_double_with_jitter_and_cap() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, seed=1)
    # retry k waits in [d/2, d] with d = min(5, 2**k): [0.5,1], [1,2], [2,4], [2.5,5], [2.5,5]
    bounds = [(0.5, 1), (1, 2), (2, 4), (2.5, 5), (2.5, 5)]
    for k, (lo, hi) in enumerate(bounds):
        for _ in range(50):
            assert lo <= policy.delay(k) <= hi


def test_retryable_failures_are_retried_until_ok() -> None:
    item = make_items(1, 1, ("a",))[0]
    judge = FakeJudge(outcome=lambda it, attempt: "rate_limit" if attempt < 2 else "ok")
    slept: list[float] = []
    j = judge_with_retries(Task(item, judge), RetryPolicy(max_retries=5), sleep=slept.append)
    assert j.status == "ok"
    assert j.details["attempts"] == 3
    assert len(slept) == 2
    assert j.conversation_id == "c0" and j.candidate_model == "a"


def test_retries_give_up_after_max_retries_with_lm_error() -> None:
    item = make_items(1, 1, ("a",))[0]
    judge = FakeJudge(outcome=lambda it, attempt: "rate_limit")
    j = judge_with_retries(Task(item, judge), RetryPolicy(max_retries=3), sleep=lambda s: None)
    assert j.status == "lm_error"
    assert j.details["attempts"] == 4  # 1 + 3 retries
    assert judge.n_calls == 4


@pytest.mark.parametrize(
    ("outcome", "parse_retries", "calls"),
    [("lm_error", 1, 1), ("parse_error", 0, 1), ("parse_error", 1, 2), ("parse_error", 3, 4)],
)
def test_non_retryable_failures_are_not_retried(
    outcome: str, parse_retries: int, calls: int
) -> None:
    # a non-retryable lm_error is final; a parse_error is asked again --parse-retries times
    item = make_items(1, 1, ("a",))[0]
    judge = FakeJudge(outcome=lambda it, attempt: outcome)
    policy = RetryPolicy(max_retries=3, parse_retries=parse_retries)
    j = judge_with_retries(Task(item, judge), policy, sleep=lambda s: None)
    assert j.status == outcome
    assert judge.n_calls == calls and j.details["attempts"] == calls
