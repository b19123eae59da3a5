"""DSPy's request cache without credentials: what it stores is redacted like every output.

DSPy keys an entry by a SHA-256 of the request (no text of it is stored) and stores the
provider's answer as it came back — for LiteLLM's answers that includes the server address
the request went to (``_hidden_params["api_base"]``), so a password or query key inside
``--api-base`` (``http://u:PASS@host/v1?key=KEY``) ended up, in plain text, in every shard of
``ATTUNE_CACHE_DIR``. :func:`redact_request_cache` makes DSPy's cache store (in memory and on
disk) a copy of each answer in which every string went through
:func:`attune_judge._secrets.redact` (:func:`redacted_copy`): URL credentials, values of
``*_KEY`` / ``*_TOKEN`` / ... variables and the credentials registered from ``--api-base``.
:func:`attune_judge.lm.configure_cache` calls it, so every command's cache does.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

from attune_judge._secrets import redact, secret_values

__all__ = ["OpeningCache", "redact_request_cache", "redacted_copy"]


def redacted_copy(value: Any, secrets: Sequence[str] | None = None) -> Any:
    """A deep copy of ``value`` with every string in it redacted (dict keys included; the
    attributes of objects, pydantic private and extra fields too). ``value`` is unchanged.

    >>> redacted_copy({"api_base": "http://u:pw@h/v1?key=k", "n": [1, ("http://t0k@h",)]}, [])
    {'api_base': 'http://u:***@h/v1?key=***', 'n': [1, ('http://***@h',)]}
    """
    found = list(secret_values() if secrets is None else secrets)
    return _scrub(copy.deepcopy(value), found, set())


def _needs_scrub(value: Any, secrets: list[str], seen: set[int]) -> bool:
    """Whether :func:`_scrub` would change any string inside ``value`` (same walk, no copy)."""
    if isinstance(value, str):
        return redact(value, secrets) != value
    if value is None or isinstance(value, int | float | bytes | bool) or id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, dict):
        return any(
            _needs_scrub(k, secrets, seen) or _needs_scrub(v, secrets, seen)
            for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return any(_needs_scrub(v, secrets, seen) for v in value)
    for name in ("__dict__", "__pydantic_private__", "__pydantic_extra__"):
        attrs = getattr(value, name, None)
        if isinstance(attrs, dict) and _needs_scrub(attrs, secrets, seen):
            return True
    if dataclasses.is_dataclass(value) and not hasattr(value, "__dict__"):
        return any(
            _needs_scrub(getattr(value, f.name), secrets, seen) for f in dataclasses.fields(value)
        )
    return False


def _scrub(value: Any, secrets: list[str], seen: set[int]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if value is None or isinstance(value, int | float | bytes | bool):
        return value
    if id(value) in seen:
        return value
    seen.add(id(value))
    if isinstance(value, dict):
        items = [(_scrub(k, secrets, seen), _scrub(v, secrets, seen)) for k, v in value.items()]
        value.clear()
        value.update(items)
        return value
    if isinstance(value, list):
        value[:] = [_scrub(v, secrets, seen) for v in value]
        return value
    if isinstance(value, tuple):
        scrubbed = [_scrub(v, secrets, seen) for v in value]
        return type(value)(*scrubbed) if hasattr(value, "_fields") else type(value)(scrubbed)
    for name in ("__dict__", "__pydantic_private__", "__pydantic_extra__"):
        attrs = getattr(value, name, None)
        if isinstance(attrs, dict):
            _scrub(attrs, secrets, seen)
    if dataclasses.is_dataclass(value) and not hasattr(value, "__dict__"):
        for f in dataclasses.fields(value):
            object.__setattr__(value, f.name, _scrub(getattr(value, f.name), secrets, seen))
    return value


def redact_request_cache(cache: Any = None) -> None:
    """Make DSPy's request cache ``cache`` (default: the current one, ``dspy.cache``) store
    redacted copies of what it is given (memory and disk; module docstring). Idempotent."""
    if cache is None:
        import dspy

        cache = getattr(dspy, "cache", None)
    if isinstance(cache, OpeningCache):
        return  # configure_cache's opening redacts the cache it makes
    if cache is None or getattr(cache, "_attune_redacting", False):
        return
    put = type(cache).put

    def redacting_put(
        request: dict[str, Any],
        value: Any,
        ignored_args_for_cache_key: list[str] | None = None,
        enable_memory_cache: bool = True,
    ) -> None:
        if not (cache.enable_memory_cache and enable_memory_cache) and not cache.enable_disk_cache:
            return
        found = secret_values()
        if _needs_scrub(value, found, set()):  # else stored as DSPy stores it (no copy to pay)
            value = _scrub(copy.deepcopy(value), found, set())
        put(cache, request, value, ignored_args_for_cache_key, enable_memory_cache)

    cache.put = redacting_put
    cache._attune_redacting = True


class OpeningCache:
    """DSPy's request cache while its disk shards are opened in a thread of their own.

    Opening the 16 SQLite shards of a disk cache is mostly waiting on the disk (each shard
    writes its settings and syncs): 0.3-1.3 s of wall time for 0.03-0.1 s of CPU on a shared
    machine, more for a new directory. :func:`attune_judge.lm.configure_cache` starts ``make``
    (which builds the ``dspy`` cache object) in a thread and installs this stand-in as
    ``dspy.cache``: the command goes on building its judges, planning and opening its run
    directory, and the first use of the cache (a model call's look-up) waits for the opening
    to end. Every attribute read or set is the real cache's; an opening that failed raises
    its error there. The thread is not a daemon: a command that ends before using the cache
    still lets the shards finish opening (never a half-written shard).
    """

    def __init__(self, make: Callable[[], Any]) -> None:
        state: dict[str, Any] = {"cache": None, "error": None, "done": threading.Event()}
        object.__setattr__(self, "_state", state)

        def opening() -> None:
            try:
                state["cache"] = make()
            except BaseException as exc:  # raised where the cache is first used
                state["error"] = exc
            finally:
                state["done"].set()

        threading.Thread(target=opening, name="attune-request-cache").start()

    def ready(self) -> Any:
        """The real cache, once open (waits for the opening; raises its error)."""
        state = object.__getattribute__(self, "_state")
        state["done"].wait()
        if state["error"] is not None:
            raise state["error"]
        return state["cache"]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ready(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.ready(), name, value)

    def __contains__(self, key: str) -> bool:
        return key in self.ready()
