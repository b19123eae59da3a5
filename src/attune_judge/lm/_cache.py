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

import atexit
import copy
import dataclasses
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from attune_judge._secrets import redact, secret_values

__all__ = [
    "SerialDiskCache",
    "flush_request_cache",
    "redact_request_cache",
    "redacted_copy",
    "share_request_cache",
]

_log = logging.getLogger(__name__)


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


class SerialDiskCache:
    """DSPy's disk cache (a ``diskcache.FanoutCache``) opened and used from one thread of its own.

    diskcache opens one SQLite connection per thread *and* shard, and commits (syncing the
    write-ahead log) on every ``set``: with 32 judging threads and 16 shards that is up to 512
    connections opened in a run, each a dozen file-system calls and settings queries, and a
    commit per answer, every one a release and re-take of the GIL by a thread among 32. The
    cache cost more than the judging (1,000 judgments at concurrency 32: 7.5 s with it, 4.2 s
    without; benchmarks/README.md). Here every disk operation runs on one thread, one
    connection per shard.

    The thread's first job is opening the shards (``open_disk()``): mostly waiting on the disk
    (each shard writes its settings and syncs; 0.3-1.3 s of wall time for 0.03-0.1 s of CPU on
    a shared machine), so a command goes on importing, reading its items and building its
    judges meanwhile, and the first operation that needs the disk waits for it (an opening
    that failed raises its error there; a store is then not written, as DSPy's own put).

    The opening also lists the keys on disk (up to :attr:`_INDEX_MAX` entries): a look-up of a
    key neither listed nor stored by this process since is a miss at once, without the disk
    (every new request is such a miss, and at concurrency 32 it waited about 10 ms for this
    thread, behind the writes: 0.45 s of a 1,000-judgment run; issue 47). What another process
    stores after the opening is not seen here: its request is asked again, never answered
    wrongly (worker processes and Ray actors, whose siblings store into the same cache during
    a run, list nothing: :func:`share_request_cache`). ``get``, ``delete`` and ``in`` of
    other keys wait for their answer; ``set`` does not (DSPy has put the answer in its memory
    cache, which every later look-up of this process reads first), and the sets that queue
    up while a batch is written are written together, in one transaction. Operations keep
    their order (a delete after a set of the same key deletes it).
    :meth:`flush` waits for the opening and every queued set; the process's exit flushes every
    such cache. A process killed before that loses the answers of its last moments from the
    cache (never a judgment: those are in the run directory) and never leaves a half-written
    entry (a transaction is all or nothing). The thread ends after a while without work and
    starts again with the next operation. In a forked child, or on its own thread, the cache
    is used directly.
    """

    _BATCH = 256
    _IDLE_S = 2.0
    _INDEX_MAX = 200_000
    """Most entries on disk for which the opening lists the keys (about 0.1 s and 15 MB per
    100,000); above it every look-up reads the disk."""
    list_keys: ClassVar[bool] = True
    """Whether openings list the keys (``False`` after :func:`share_request_cache`)."""
    _live: ClassVar[weakref.WeakSet[SerialDiskCache]] = weakref.WeakSet()

    def __init__(self, open_disk: Callable[[], Any]) -> None:
        self._open_disk = open_disk
        self._opened: Any = None  # the FanoutCache, once open
        self._open_error: BaseException | None = None  # what the opening raised
        self._ready = threading.Event()
        self._listed: set[Any] | None = None  # the keys on disk when opened (None: not listed)
        self._stored: set[Any] = set()  # the keys this process stored since
        self._ops: queue.SimpleQueue[tuple[str, Any, Any, list[Any] | None]] = queue.SimpleQueue()
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        if not SerialDiskCache._live:
            atexit.register(SerialDiskCache.flush_all)
        SerialDiskCache._live.add(self)
        self._submit(("flush", None, None, None))  # starts the thread: it opens the shards first

    @property
    def _disk(self) -> Any:
        """The open ``FanoutCache`` (waits for the opening; raises the error it raised)."""
        if not self._ready.is_set() and os.getpid() != self._pid:
            self._open()  # a forked child: the opening thread was its parent's
        self._ready.wait()
        if self._open_error is not None:
            raise self._open_error
        return self._opened

    def _open(self) -> None:
        try:
            disk = self._open_disk()
            if self.list_keys and len(disk) <= self._INDEX_MAX:
                self._listed = set(iter(disk))
            self._opened = disk
        except BaseException as exc:  # raised where the disk is used
            self._open_error = exc
        finally:
            self._ready.set()

    @classmethod
    def flush_all(cls) -> None:
        """:meth:`flush` every such cache of this process (at its exit)."""
        for cache in list(cls._live):
            cache.flush()

    def _maybe_on_disk(self, key: Any) -> bool:
        """Whether ``key`` may be on disk (waits for the opening; raises its error)."""
        self._disk  # noqa: B018  (the opening, done)
        return self._listed is None or key in self._listed or key in self._stored

    def get(self, key: Any, default: Any = None) -> Any:
        if not self._maybe_on_disk(key):
            return default  # a miss, known without the disk
        return self._call("get", key, default)

    def set(self, key: Any, value: Any) -> bool:
        self._stored.add(key)
        if self._direct():
            return bool(self._disk.set(key, value))
        self._submit(("set", key, value, None))
        return True

    def delete(self, key: Any) -> bool:
        return bool(self._call("delete", key))

    def __contains__(self, key: Any) -> bool:
        return self._maybe_on_disk(key) and bool(self._call("contains", key))

    def flush(self) -> None:
        """Wait until every ``set`` queued before this call is on disk."""
        if self._thread is not None:
            self._call("flush", None)

    def close(self) -> None:
        self.flush()
        self._disk.close()

    def __getattr__(self, name: str) -> Any:  # directory, transact, ...: the FanoutCache's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._disk, name)

    def _direct(self) -> bool:
        return os.getpid() != self._pid or threading.current_thread() is self._thread

    def _submit(self, op: tuple[str, Any, Any, list[Any] | None]) -> None:
        with self._lock:
            self._ops.put(op)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="attune-cache-io", daemon=True
                )
                self._thread.start()

    def _call(self, op: str, key: Any, default: Any = None) -> Any:
        if self._direct():
            return self._apply(op, key, default)
        done = threading.Lock()
        done.acquire()
        slot: list[Any] = [done, None, None]
        self._submit((op, key, default, slot))
        done.acquire()  # released by the cache's thread once slot holds the answer
        if slot[2] is not None:
            raise slot[2]
        return slot[1]

    def _apply(self, op: str, key: Any, default: Any) -> Any:
        if op == "get":
            return self._disk.get(key, default)
        if op == "delete":
            return self._disk.delete(key)
        if op == "contains":
            return key in self._disk
        return None  # flush: every set queued before it is written by now

    def _serve(self) -> None:
        if not self._ready.is_set():
            self._open()
        while True:
            try:
                ops = [self._ops.get(timeout=self._IDLE_S)]
            except queue.Empty:
                with self._lock:
                    if self._ops.empty():
                        self._thread = None
                        return
                continue
            while len(ops) < self._BATCH:
                try:
                    ops.append(self._ops.get_nowait())
                except queue.Empty:
                    break
            self._write([(k, v) for op, k, v, _ in ops if op == "set"])
            for op, key, default, slot in ops:
                if slot is not None:
                    try:
                        slot[1] = self._apply(op, key, default)
                    except BaseException as exc:  # raised in the caller's thread
                        slot[2] = exc
                    slot[0].release()

    def _write(self, sets: list[tuple[Any, Any]]) -> None:
        if not sets:
            return
        try:
            if len(sets) == 1:
                self._disk.set(*sets[0])
                return
            with self._disk.transact():
                for key, value in sets:
                    self._disk.set(key, value)
        except Exception as exc:  # as DSPy's own put: a cache not written costs a re-ask
            _log.debug("request cache: %d answer(s) not stored: %s", len(sets), exc)


def flush_request_cache() -> None:
    """Wait until every answer handed to DSPy's request cache is on its disk (a no-op when
    the cache is off, in memory only, or not a :class:`SerialDiskCache`). The runner calls it
    before it records a judgment, so a recorded judgment's answer is in the cache, whichever
    executor ran it (a worker process or Ray actor may be stopped at once after its last
    task: nothing waits for its exit)."""
    import sys

    dspy = sys.modules.get("dspy")
    cache = getattr(dspy, "cache", None)
    disk = getattr(cache, "disk_cache", None)
    if isinstance(disk, SerialDiskCache):
        disk.flush()


def share_request_cache() -> None:
    """This process judges beside sibling processes that store into the same request cache (a
    worker process, a Ray actor): the caches it opens from now on read the disk for every
    look-up, not only for the keys on disk when they opened (:class:`SerialDiskCache`), so an
    answer a sibling stored during the run is used, not asked again."""
    SerialDiskCache.list_keys = False
