"""An autouse fixture closing LiteLLM's cached HTTP clients after each test of a module that
talks to a loopback server (import ``_closed_http_clients`` into the module).

Their pooled sockets would otherwise be finalised during a later test's garbage collection and
surface there as an unraisable ResourceWarning (warnings are errors).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from attune_judge.testing import close_http_clients

__all__ = ["_closed_http_clients", "close_http_clients"]


@pytest.fixture(autouse=True)
def _closed_http_clients() -> Iterator[None]:
    yield
    close_http_clients()
