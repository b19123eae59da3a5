"""Closing the HTTP clients that LiteLLM and DSPy keep after a test that used a loopback server.

Their pooled sockets would otherwise be finalised during a later test's garbage collection and
surface there as an unraisable ResourceWarning (warnings are errors).
"""

from __future__ import annotations

import gc
import inspect
import warnings
from collections.abc import Iterator

import pytest


def close_http_clients() -> None:
    """Close LiteLLM's cached clients and collect unreachable DSPy engines, silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            import litellm

            cache = litellm.in_memory_llm_clients_cache
            for client in list(cache.cache_dict.values()):
                close = getattr(client, "close", None)
                if callable(close) and not inspect.iscoroutinefunction(close):
                    close()
            cache.flush_cache()
        except Exception:  # pragma: no cover - best effort
            pass
        gc.collect()


@pytest.fixture(autouse=True)
def _closed_http_clients() -> Iterator[None]:
    yield
    close_http_clients()
