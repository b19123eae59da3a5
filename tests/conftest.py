"""Test-wide settings: offline, with DSPy's and our caches in a temporary directory.

These variables are set at import time, before any test module imports dspy or litellm.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_CACHE_ROOT = Path(tempfile.mkdtemp(prefix="attune-test-cache-"))
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["DSPY_CACHEDIR"] = str(_CACHE_ROOT / "dspy")
os.environ["ATTUNE_CACHE_DIR"] = str(_CACHE_ROOT / "attune")
os.environ.setdefault("MPLBACKEND", "Agg")
for _var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "ATTUNE_LM"):
    os.environ.pop(_var, None)

REPO_ROOT = Path(__file__).resolve().parents[1]
# Facts the tests read, inside the repository (cut by tests/fixtures/make_fixtures.py):
# published reference values, the instrument file, small samples of each public dataset.
FIXTURES = REPO_ROOT / "tests" / "fixtures"
DATASETS = FIXTURES / "datasets"
DESIGN = FIXTURES / "design"
SAMPLES = REPO_ROOT / "data" / "samples" / "attunebench"


@pytest.fixture(autouse=True)
def _no_stray_event_loop() -> Iterator[None]:
    """LiteLLM's service logger calls ``asyncio.get_event_loop()`` on a blocking request, which
    creates and sets a loop for the main thread that nobody closes; the next ``asyncio.run``
    replaces it, and its garbage collection in some later test surfaced as an unraisable
    "unclosed event loop" ResourceWarning (a CI failure in a test that uses no loop at all).
    After each test, a loop left set and idle is closed here."""
    yield
    import asyncio

    local = getattr(asyncio.get_event_loop_policy(), "_local", None)
    loop = getattr(local, "_loop", None)
    if loop is not None and not loop.is_running() and not loop.is_closed():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def _heap_frozen_after_collection() -> Iterator[None]:
    """After each test, one garbage collection, then what survived it is frozen (``gc.freeze``).

    A worker's heap holds dspy, litellm, pydantic and numpy: every full collection walked all of
    it again (0.3-0.5 s quiet, seconds under load, in every test that closes its HTTP clients,
    and in Python's own collections), which was about a tenth of the suite's time. What
    survives a full collection is alive; freezing it leaves each later collection the objects
    made since. Garbage, and any unclosed socket in it, is still collected (and warned about)
    in the test that made it."""
    yield
    import gc

    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _request_cache_restored() -> Iterator[None]:
    """DSPy's request cache is process-wide: a test that turns it off (``ATTUNE_CACHE=0``)
    must not leave it off for the next one. After each test it points at the test cache again."""
    yield
    import sys

    if "dspy" in sys.modules:
        import dspy

        global _TEST_CACHE
        if _TEST_CACHE is not None and dspy.cache is _TEST_CACHE:
            return  # untouched: a new one would open its 16 disk shards again (30-60 ms)
        from attune_judge.lm import configure_cache

        configure_cache(os.environ["ATTUNE_CACHE_DIR"], enabled=True)
        _TEST_CACHE = dspy.cache


_TEST_CACHE: Any = None


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """One real local Ray cluster (2 CPUs, loopback) for the whole session, stopped at the end.

    Its workers inherit this environment as it is now, plus ``OPENAI_API_KEY=sk-node-only``
    (removed again from the test process: only the "node" has it) and ``PYTHONPATH`` with the
    repository (so actors can import ``tests``).
    """
    import ray

    saved = {k: os.environ.get(k) for k in ("OPENAI_API_KEY", "PYTHONPATH")}
    os.environ["OPENAI_API_KEY"] = NODE_KEY
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (saved["PYTHONPATH"], str(REPO_ROOT)) if p
    )
    try:
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            configure_logging=False,
            log_to_driver=False,
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        yield ray
    finally:
        ray.shutdown()


NODE_KEY = "sk-node-only-0123456789"
"""The API key the Ray test cluster's nodes have (the test process does not)."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``pytest -n 2 --dist loadgroup`` (``make test``), the tests that start real
    components (a model, a server, Ray, Chromium: marked ``slow`` or ``browser``) run one
    after another on one worker, so two of them never compete for the two cores and at most
    one Ray cluster runs; every other test is spread over both workers. A test that names its
    own ``xdist_group`` keeps it (the embedded-model sweep over every shipped rubric runs on
    the other worker, with one model thread)."""
    for item in items:
        if item.get_closest_marker("xdist_group"):  # a test that names its own group
            continue
        if item.get_closest_marker("slow") or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("real-components"))
