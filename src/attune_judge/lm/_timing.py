"""Request time versus queue time of a judgment.

A judgment's ``latency_s`` is the wall time from its first attempt to its last (retries and
backoffs included). Inside it, :func:`request_timer` collects how long the model calls
themselves took (:func:`add_request`, from the judges' program calls) and how much of that was
spent waiting for a shared resource rather than computing (:func:`add_queue`, e.g. the
embedded model's lock while another thread generates). ``request_s`` = calls − waiting.

The collector is a mutable object in a context variable, so calls made in worker threads or
``asyncio`` tasks started inside the timer (which copy the context) add to the same totals.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["RequestTimes", "add_queue", "add_request", "request_timer"]


@dataclass
class RequestTimes:
    """Seconds in model calls, and seconds of that spent waiting."""

    calls_s: float = 0.0
    waited_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def request_s(self) -> float:
        """Time the model spent on the requests (calls minus waiting)."""
        return max(0.0, self.calls_s - self.waited_s)


_CURRENT: ContextVar[RequestTimes | None] = ContextVar("attune_request_times", default=None)


@contextlib.contextmanager
def request_timer() -> Iterator[RequestTimes]:
    """Collect the request times of everything judged inside the ``with`` block."""
    times = RequestTimes()
    token = _CURRENT.set(times)
    try:
        yield times
    finally:
        _CURRENT.reset(token)


def add_request(seconds: float) -> None:
    """Count ``seconds`` of model calls (no-op outside :func:`request_timer`)."""
    times = _CURRENT.get()
    if times is not None:
        with times._lock:
            times.calls_s += seconds


def add_queue(seconds: float) -> None:
    """Count ``seconds`` of waiting inside model calls (no-op outside a timer)."""
    times = _CURRENT.get()
    if times is not None:
        with times._lock:
            times.waited_s += seconds
