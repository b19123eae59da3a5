"""Executing tasks: a small Executor interface, a thread-pool implementation, retries.

The :class:`Executor` protocol is the seam for scale-out: anything that can apply a function
to tasks and yield the results *as they finish* can run a plan. The runner is the single
consumer and the single writer, so executors never touch the run directory.
:class:`ThreadExecutor` (here) runs them in threads of this process;
:class:`~attune_judge.runner.ProcessExecutor` (``_process.py``) in worker processes, for runs
that are CPU-bound in DSPy; :class:`~attune_judge.runner.RayExecutor` (``_ray.py``) in Ray
actors on one machine or a cluster.

Retries live in :func:`judge_with_retries`, inside the task function, and nowhere else (DSPy's
and LiteLLM's own ``num_retries`` are 0 under every command, so ``details["attempts"]`` counts
every request): a judgment with ``status="lm_error"`` and ``details["retryable"] = True`` (rate
limit, timeout, connection, server error) is tried again after the server's ``Retry-After``
(capped at ``RetryPolicy.retry_after_cap_s``) or else an exponential backoff with jitter; a
``parse_error`` is tried again ``RetryPolicy.parse_retries`` times (its answer was evicted from
the request cache, so the retry asks the model again). The worker sleeps while it backs off, so
a rate-limited run slows down instead of hammering the provider.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from attune_judge.data import Judgment, TokenUsage
from attune_judge.lm import flush_request_cache
from attune_judge.lm._timing import request_timer
from attune_judge.runner._plan import Task

__all__ = [
    "CancelFlag",
    "ConcurrencyLimit",
    "Executor",
    "JudgeTaskFn",
    "RetryPolicy",
    "ThreadExecutor",
    "is_retryable",
    "judge_with_retries",
    "retry_wait",
]

T = TypeVar("T")
R = TypeVar("R")


class CancelFlag(Protocol):
    """Anything with ``is_set()``: a :class:`threading.Event` or a ``multiprocessing`` Event."""

    def is_set(self) -> bool:
        """Whether cancellation was requested."""
        ...


class Executor(Protocol):
    """Applies a function to tasks concurrently and yields results in completion order."""

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        *,
        stop: threading.Event | None = None,
    ) -> Iterator[R]:
        """Yield ``fn(task)`` for each task as it finishes.

        When ``stop`` is set no further task is started; the ones already running are still
        yielded, so their (paid-for) results can be recorded. An exception raised by ``fn`` is a
        bug: it propagates to the consumer after the remaining work is cancelled.
        """
        ...


class Window:
    """The work in flight of one :meth:`WindowExecutor.map_unordered` call."""

    def in_flight(self) -> int:
        """Tasks (or chunks of tasks) sent and not finished."""
        raise NotImplementedError

    def send(self, todo: Iterator[Any]) -> bool:
        """Send the next task (or chunk) of ``todo``; ``False`` when there is none."""
        raise NotImplementedError

    def receive(self) -> Iterable[Any]:
        """Wait until work finishes; its results."""
        raise NotImplementedError

    def stopping(self) -> None:
        """``stop`` is set: nothing more is sent (tell the workers, if they can hear it)."""

    def close(self, clean: bool) -> None:
        """After the last result (``clean``), or after an error or an abandoned iterator."""


class ConcurrencyLimit:
    """How much work a :class:`WindowExecutor` keeps in flight: fixed at ``maximum``, or
    adapted to the provider's rate-limit answers (``adaptive``, the default of every command).

    The adaptive rule is TCP's congestion control (RFC 5681, section 3.1; additive increase,
    multiplicative decrease, Chiu & Jain 1989), with a finished task as the acknowledgement
    and a rate-limited answer as the loss: the window starts at ``min(maximum, 4)`` and grows
    by one per clean result up to a threshold (slow start, which begins as the maximum), then
    by ``1/window`` per clean result (one per window's worth of results, congestion
    avoidance), never above ``maximum``. A result that met an HTTP 429 or a ``Retry-After``
    (``details["rate_limited"]``, counted by :func:`judge_with_retries`) halves the window
    (not below 1) and sets the threshold there — once per window: the results of work sent
    before the cut do not cut it again. The window is read before each send, so work already
    in flight finishes; fewer new tasks start.

    >>> limit = ConcurrencyLimit(64)
    >>> limit.window()
    4
    >>> for _ in range(4):
    ...     limit.observe(0)
    >>> limit.window()
    8
    >>> limit.observe(1)
    >>> limit.window(), limit.backoffs, limit.rate_limited
    (4, 1, 1)
    """

    START = 4
    """The adaptive window's first size (TCP's initial window is 2-4 segments)."""

    def __init__(self, maximum: int, adaptive: bool = True) -> None:
        if maximum < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.maximum = maximum
        self.adaptive = adaptive
        self.size = float(min(maximum, self.START) if adaptive else maximum)
        self.threshold = float(maximum)
        self.backoffs = 0
        """Times the window was cut."""
        self.rate_limited = 0
        """Rate-limited answers seen (every attempt of every result)."""
        self.peak_in_flight = 0
        """Most work in flight at once."""
        self._since_cut = 0
        self._cut_at = 0.0

    def window(self) -> int:
        """Work to keep in flight now."""
        return max(1, min(self.maximum, int(self.size)))

    def sent(self, in_flight: int) -> None:
        """Work was sent; ``in_flight`` is in flight now."""
        self.peak_in_flight = max(self.peak_in_flight, in_flight)

    def observe(self, rate_limited: int) -> None:
        """One result came back, having met ``rate_limited`` rate-limit answers."""
        self._since_cut += 1
        if rate_limited > 0:
            self.rate_limited += rate_limited
            if self.adaptive and self._since_cut > self._cut_at:
                self._cut_at = self.size  # the results of work sent before the cut
                self.size = max(1.0, self.size / 2)
                self.threshold = self.size
                self.backoffs += 1
                self._since_cut = 0
            return
        if not self.adaptive or self.size >= self.maximum:
            return
        self.size += 1.0 if self.size < self.threshold else 1.0 / self.size
        self.size = min(float(self.maximum), self.size)

    def observe_results(self, results: Iterable[Any]) -> None:
        """:meth:`observe` each result (a :class:`~attune_judge.data.Judgment`, or anything
        with a ``details`` mapping; other results count as clean)."""
        for result in results:
            details = getattr(result, "details", None)
            n = details.get("rate_limited", 0) if isinstance(details, dict) else 0
            self.observe(n if isinstance(n, int) and not isinstance(n, bool) else 0)


class WindowExecutor:
    """An executor with at most ``max_concurrency`` tasks (or chunks) in flight, sent lazily
    (a sliding window): stopping early never leaves a long queue of started work behind, and
    memory stays flat for large plans. The thread, process and Ray executors open a
    :class:`Window` per call (:meth:`_open`); the loop is this one, and so is the one place
    where the amount in flight adapts to rate limits (``limit``, a :class:`ConcurrencyLimit`)."""

    max_concurrency: int

    def _open(self, fn: Callable[[Any], Any], tasks: Iterable[Any], stop: Any) -> Window:
        raise NotImplementedError

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        *,
        stop: threading.Event | None = None,
        limit: ConcurrencyLimit | None = None,
    ) -> Iterator[R]:
        """See :meth:`Executor.map_unordered`; ``limit`` (default: fixed at
        ``max_concurrency``) decides how much is in flight and learns from each result."""
        limit = limit if limit is not None else ConcurrencyLimit(self.max_concurrency, False)
        limit.maximum = min(limit.maximum, self.max_concurrency)
        window = self._open(fn, tasks, stop)
        todo = iter(tasks)
        clean = False
        try:
            exhausted = False
            while True:
                while not exhausted and window.in_flight() < limit.window():
                    if stop is not None and stop.is_set():
                        window.stopping()
                        exhausted = True
                    else:
                        exhausted = not window.send(todo)
                        limit.sent(window.in_flight())
                if not window.in_flight():
                    break
                results = list(window.receive())
                limit.observe_results(results)
                yield from results
            clean = True
        finally:
            window.close(clean)


class ThreadExecutor(WindowExecutor):
    """Thread-pool executor with at most ``max_concurrency`` tasks in flight (a sliding window,
    :class:`WindowExecutor`)."""

    def __init__(self, max_concurrency: int = 8) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.max_concurrency = max_concurrency

    def _open(self, fn: Callable[[Any], Any], tasks: Iterable[Any], stop: Any) -> Window:
        return _ThreadWindow(fn, self.max_concurrency)


class _ThreadWindow(Window):
    def __init__(self, fn: Callable[[Any], Any], max_concurrency: int) -> None:
        self.fn = fn
        # finished futures arrive on a queue (one callback each): O(1) per completion, where
        # ``wait(FIRST_COMPLETED)`` would install and remove a waiter on every future in flight
        self.finished: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()
        self.running = 0
        self.pool = ThreadPoolExecutor(max_concurrency, thread_name_prefix="attune-runner")

    def in_flight(self) -> int:
        return self.running

    def send(self, todo: Iterator[Any]) -> bool:
        task = next(todo, DONE)
        if task is DONE:
            return False
        self.pool.submit(self.fn, task).add_done_callback(self.finished.put)
        self.running += 1
        return True

    def receive(self) -> Iterable[Any]:
        future = _next_finished(self.finished)
        self.running -= 1
        return (future.result(),)

    def close(self, clean: bool) -> None:
        # normal end: everything finished; early exit (consumer stopped, bug, Ctrl-C):
        # drop what has not started and do not wait for in-flight calls.
        self.pool.shutdown(wait=clean, cancel_futures=True)


def _next_finished(finished: queue.SimpleQueue[Future[R]]) -> Future[R]:
    """The next finished future (short timed waits, so Ctrl-C is seen at once)."""
    while True:
        try:
            return finished.get(timeout=0.2)
        except queue.Empty:
            continue


DONE = object()
"""The end of an iterator of tasks (``next(todo, DONE)``)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter for retryable LM failures.

    The delay before retry ``k`` (``k = 0, 1, ...``) is drawn uniformly from
    ``[d/2, d]`` with ``d = min(max_delay_s, base_delay_s * 2**k)`` ("equal jitter": spreads
    concurrent workers apart while keeping a floor on the wait).
    """

    max_retries: int = 5
    """Retries after the first attempt (0 = no retry)."""
    base_delay_s: float = 1.0
    """Backoff before the first retry (upper end of its jitter range)."""
    max_delay_s: float = 60.0
    """Cap on a single backoff."""
    seed: int | None = None
    """Seed of the jitter generator (``None``: not reproducible, which is fine for timing)."""
    parse_retries: int = 1
    """Extra attempts for a ``parse_error`` (the failed answer is not replayed from the cache)."""
    retry_after_cap_s: float = 60.0
    """Longest ``Retry-After`` honoured; a longer one is waited for this long."""
    _rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.seed is not None:
            self._rng.seed(self.seed)

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        d = min(self.max_delay_s, self.base_delay_s * (2.0**retry))
        return d / 2 + self._rng.random() * d / 2


def retry_wait(policy: RetryPolicy, retry: int, retry_after_s: float | None) -> float:
    """Seconds to wait before retry ``retry``: the server's ``Retry-After`` (capped), else the
    policy's backoff."""
    if retry_after_s is not None and retry_after_s >= 0:
        return min(policy.retry_after_cap_s, float(retry_after_s))
    return policy.delay(retry)


def is_retryable(judgment: Judgment) -> bool:
    """A transient LM failure (rate limit, timeout, connection) that is worth trying again."""
    return judgment.status == "lm_error" and bool(judgment.details.get("retryable"))


def judge_with_retries(
    task: Task,
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    cancelled: CancelFlag | None = None,
) -> Judgment:
    """Judge one task, retrying retryable LM failures per ``policy``.

    The returned judgment is the last attempt's, with ``details["attempts"]`` (1 + retries)
    and ``latency_s`` covering all attempts and backoffs; ``details["request_s"]`` is the time
    the model calls themselves took (all attempts; waiting for a shared model excluded) and
    ``details["queue_s"]`` the rest of ``latency_s`` (backoffs, waiting). ``conversation_id`` and
    ``candidate_model`` are filled from the item when the judge left them empty.
    """
    with request_timer() as times:
        judgment = _attempts(task, policy, sleep=sleep, cancelled=cancelled)
    judgment.details["request_s"] = round(times.request_s, 6)
    if judgment.latency_s is not None:
        judgment.details["queue_s"] = round(max(0.0, judgment.latency_s - times.request_s), 6)
    return judgment


def _attempts(
    task: Task,
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None],
    cancelled: CancelFlag | None,
) -> Judgment:
    start = time.perf_counter()
    attempts = transient = parse_failures = rate_limited = 0
    requests: int | None = None
    spent = TokenUsage()
    while True:
        attempts += 1
        judgment = task.judge.judge(task.item)
        spent = TokenUsage(  # every attempt's tokens were paid for
            prompt_tokens=spent.prompt_tokens + judgment.usage.prompt_tokens,
            completion_tokens=spent.completion_tokens + judgment.usage.completion_tokens,
            calls=spent.calls + judgment.usage.calls,
        )
        sent = _requests_of(judgment)
        if sent is not None:
            requests = (requests or 0) + sent
        if _is_rate_limited(judgment):
            rate_limited += 1
        if cancelled is not None and cancelled.is_set():
            break
        if is_retryable(judgment) and transient < policy.max_retries:
            wait = retry_wait(policy, transient, _retry_after(judgment))
            transient += 1
            if not _sleep_unless_cancelled(sleep, wait, cancelled):
                break
            continue
        if judgment.status == "parse_error" and parse_failures < policy.parse_retries:
            parse_failures += 1
            continue
        break
    if (judgment.item_id, judgment.judge_id) != task.key:
        raise RuntimeError(
            f"judge {task.judge.judge_id!r} returned a judgment for "
            f"{(judgment.item_id, judgment.judge_id)!r} when asked for {task.key!r}"
        )
    judgment.details["attempts"] = attempts
    if rate_limited:
        judgment.details["rate_limited"] = rate_limited
    judgment.usage = spent
    if requests is not None:
        judgment.details["requests"] = requests
    judgment.latency_s = time.perf_counter() - start
    if judgment.conversation_id is None:
        judgment.conversation_id = task.item.conversation_id
    if judgment.candidate_model is None:
        judgment.candidate_model = task.item.candidate_model
    return judgment


def _is_rate_limited(judgment: Judgment) -> bool:
    """An attempt the provider pushed back on: HTTP 429 (a rate-limit error) or an answer with
    ``Retry-After`` (a 503 that says when to come back)."""
    if judgment.status != "lm_error":
        return False
    return _retry_after(judgment) is not None or "RateLimit" in (judgment.error or "")


def _requests_of(judgment: Judgment) -> int | None:
    """Requests the judge reports for one attempt (``None`` when it does not say)."""
    value = judgment.details.get("requests")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _retry_after(judgment: Judgment) -> float | None:
    value = judgment.details.get("retry_after_s")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _sleep_unless_cancelled(
    sleep: Callable[[float], None], seconds: float, cancelled: CancelFlag | None
) -> bool:
    """Sleep ``seconds`` in short steps; ``False`` when cancelled meanwhile."""
    if cancelled is None or sleep is not time.sleep:
        sleep(seconds)
        return cancelled is None or not cancelled.is_set()
    deadline = time.monotonic() + seconds
    while True:
        if cancelled.is_set():
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(0.1, left))


class JudgeTaskFn:
    """The runner's task function: :func:`judge_with_retries` with a policy and a cancel flag.

    Unlike a ``functools.partial`` it can be pickled (the cancel flag is dropped: it belongs to
    the process that made it), and :meth:`with_cancel` rebinds it to another process's flag —
    what the process executor does in its workers.
    """

    def __init__(self, policy: RetryPolicy, cancelled: CancelFlag | None = None) -> None:
        self.policy = policy
        self.cancelled = cancelled

    def __call__(self, task: Task) -> Judgment:
        """Judge ``task`` with retries; the answers it got are in the request cache on disk
        when it returns (``lm.flush_request_cache``)."""
        try:
            return judge_with_retries(task, self.policy, cancelled=self.cancelled)
        finally:
            flush_request_cache()

    def with_cancel(self, cancelled: CancelFlag | None) -> JudgeTaskFn:
        """The same function with another cancel flag."""
        return JudgeTaskFn(self.policy, cancelled)

    def __reduce__(self) -> tuple[type[JudgeTaskFn], tuple[RetryPolicy]]:
        return (JudgeTaskFn, (self.policy,))
