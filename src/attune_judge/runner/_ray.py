"""A Ray executor: tasks go to Ray actors on a local or multi-node cluster.

:class:`RayExecutor` is :class:`~attune_judge.runner.ProcessExecutor` across machines:

- Each actor builds its judges once from a :class:`~attune_judge.runner.JudgeFactory` (judges
  hold LM clients, locks and models, and cannot be shipped); a :class:`Task` crosses to an
  actor as ``(item, judge_id)`` and is re-joined to the actor's judge of that id.
- What moves between nodes: the judge factory (a module-level function and its arguments —
  rubric, model string, API base, decoding settings), the task function (retry policy), the
  items, and the judgments coming back. **Never an API key**: an actor's LM reads its key from
  the environment of the node it runs on (set ``OPENAI_API_KEY`` etc. on every node, before
  ``ray start``).
- Results stream back to the parent (the Ray driver), which alone writes the run directory, so
  resume, SIGKILL safety, the run lock and the cache behave as with threads: a judgment is on
  disk only once the parent wrote it; whatever an actor was doing when the parent died is
  redone by the next invocation.
- Work goes out in **chunks**: one actor call takes several tasks, runs them one after another
  (none once the parent asked to stop) and streams the results back as they finish (a Ray
  streaming generator; what finished within :data:`FLUSH_S` travels as one object), so the
  parent's cost per call is paid once per chunk and Ray's per object once per batch. The actors have
  ``ceil(max_concurrency / workers)`` threads each; the parent keeps at most
  ``max_concurrency`` chunks in flight (so as many tasks running), each sent to the actor with
  the fewest. Chunk size: ``chunk_size``, else :meth:`RayExecutor.next_chunk_size` (from the
  measured time per task, the concurrency and the tasks left).
- A dead actor (node lost, killed, out of memory) raises :class:`WorkerError` instead of
  hanging; its in-flight tasks are not recorded and a resume redoes them.

``address=None`` starts a local cluster or joins the one ``ray start`` left on this machine
(``RAY_ADDRESS`` first); ``"ray://host:10001"`` or ``"host:6379"`` joins a remote one. A
cluster this executor started is shut down by :meth:`close`; one it joined is left running.
On Linux a started cluster runs under a guard process that tears it down however the command
ends, a SIGKILL included (``_ray_guard.py``).
Ray is an optional dependency (``pip install 'attune-judge[ray]'``), imported only here.
"""

from __future__ import annotations

import itertools
import math
import os
import pickle
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sized
from typing import Any

from attune_judge.errors import UserError
from attune_judge.lm import share_request_cache
from attune_judge.runner._executor import Window
from attune_judge.runner._plan import Task
from attune_judge.runner._process import (
    _FACTORY,
    JudgeFactory,
    WorkerError,
    WorkerPool,
    _pack,
    _pack_fn,
    _TaskRef,
)
from attune_judge.runner._ray_guard import may_guard, start_guarded_cluster, use_local_token

__all__ = ["CALLS_PER_S", "MAX_CHUNK", "RayExecutor", "import_ray"]

_WAIT_S = 0.5

CALLS_PER_S = 20.0
"""Actor calls a second the parent aims at when it sizes chunks. Each call costs CPU on both
sides (Ray's task set-up, its stream's objects and end): at 200 a second one actor with a
5 ms model was 1.18-1.24x the thread executor's wall, with chunks of 63 0.96x."""

MAX_CHUNK = 64
"""Largest chunk chosen automatically (bounds what one stopped or lost call holds)."""

FLUSH_S = 0.5
"""An actor sends the results of a chunk that finished within this many seconds in one
streamed object: Ray's cost per object (in its C++ threads, on both sides) was most of the
CPU an actor and the parent spent beyond the judgments themselves with a fast model."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`UserError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError(
            "--executor ray needs Ray: pip install 'attune-judge[ray]' (or pip install ray)"
        ) from None
    return ray


class _ActorCancel:
    """The cancel flag inside an actor (set by the parent's ``stop``)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def is_set(self) -> bool:
        return self.event.is_set()


class _Worker:
    """The actor class (wrapped by ``ray.remote`` at start): judges built once, tasks run in
    the actor's threads. Arguments and results travel as pickled bytes, so what crosses the
    wire is exactly what :func:`_pack` made (see the key test)."""

    def __init__(self, factory_blob: bytes) -> None:
        # as resolve_lm does in the parent: LiteLLM would otherwise fetch its price list
        # from the network on import (seconds of retries on an offline node)
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        share_request_cache()  # the other actors store into it during the run
        self.cancel = _ActorCancel()
        self.fn: Callable[[Any], Any] | None = None
        self.judges: dict[str, Any] = {}
        self.setup_error: tuple[str, str] | None = None
        try:
            factory: JudgeFactory | None = pickle.loads(factory_blob)
            if factory is not None:
                self.judges = {j.judge_id: j for j in factory.build()}
        except UserError as exc:  # a node without the key, an unreachable server, ...
            self.setup_error = ("user", str(exc))
        except BaseException:
            self.setup_error = ("bug", traceback.format_exc())

    def ready(self) -> tuple[str, Any]:
        """``("ok", judge ids)`` or ``("user" | "bug", message)``, with this node's address."""
        import socket

        node = socket.gethostname()
        if self.setup_error is not None:
            return self.setup_error[0], f"on node {node}: {self.setup_error[1]}"
        return "ok", sorted(self.judges)

    def set_fn(self, fn_blob: bytes) -> None:
        fn = pickle.loads(fn_blob)
        rebind = getattr(fn, "with_cancel", None)
        self.fn = rebind(self.cancel) if callable(rebind) else fn
        self.cancel.event.clear()

    def set_cancel(self) -> None:
        self.cancel.event.set()

    def run(self, blob: bytes) -> bytes:
        """One task: ``("result", value, seconds)`` or ``("task_error", traceback)``."""
        payload = pickle.loads(blob)
        if isinstance(payload, _TaskRef):
            payload = Task(payload.item, self.judges[payload.judge_id])
        assert self.fn is not None, "set_fn first"
        started = time.perf_counter()
        try:
            return _pack(("result", self.fn(payload), time.perf_counter() - started))
        except BaseException:
            return _pack(("task_error", traceback.format_exc()))

    def run_chunk(self, blobs: list[bytes]) -> Iterator[list[bytes]]:
        """Tasks one after another, their results streamed to the parent in batches: what
        finished within :data:`FLUSH_S` goes out together (a slow task's result at once);
        none is started once the parent asked to stop."""
        done: list[bytes] = []
        last = time.monotonic()
        for blob in blobs:
            if self.cancel.is_set():
                break
            done.append(self.run(blob))
            if time.monotonic() - last >= FLUSH_S:
                yield done
                done, last = [], time.monotonic()
        if done:
            yield done


class RayExecutor(WorkerPool):
    """Runs tasks on ``workers`` Ray actors of ``ceil(max_concurrency / workers)`` threads.

    Parameters
    ----------
    factory
        Builds the judges in each actor (needed for :class:`Task` s; other picklable tasks run
        without it).
    workers
        Actors (default 2). Place them across nodes with ``num_cpus``: Ray puts an actor
        where its CPUs are free.
    max_concurrency
        Tasks in flight over all actors.
    address
        Cluster to join (``None``: start or join a local one).
    num_cpus
        CPUs each actor reserves (default 1).
    init_kwargs
        Extra ``ray.init`` keywords when this executor connects (``runtime_env``, ...).
    chunk_size
        Tasks per actor call (``None``: chosen from the measured time per task, see
        :meth:`next_chunk_size`).

    Actors start on first use and stay up for the next :meth:`map_unordered` until
    :meth:`close` (or the end of a ``with`` block). An early exit of a map kills them, and
    the next map starts fresh ones.
    """

    def __init__(
        self,
        factory: JudgeFactory | None = None,
        *,
        workers: int = 2,
        max_concurrency: int = 8,
        address: str | None = None,
        num_cpus: float = 1.0,
        init_kwargs: dict[str, Any] | None = None,
        chunk_size: int | None = None,
    ) -> None:
        super().__init__(factory, workers, max_concurrency)
        if chunk_size is not None and chunk_size < 1:
            raise ValueError("chunk_size must be >= 1")
        self._factory_blob = _pack_fn(factory, "Ray actors", _FACTORY)
        self.address = address
        self.num_cpus = num_cpus
        self.init_kwargs = dict(init_kwargs or {})
        self.chunk_size = chunk_size
        self._task_s: float | None = None  # moving average of the time per task in an actor
        self._owns_cluster = False
        self._guard: Any = None
        self._actors: list[Any] = []

    # -- lifecycle -------------------------------------------------------------------------

    def _connect(self) -> Any:
        ray = import_ray()
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": True,
                "configure_logging": False,
                **self.init_kwargs,
            }
            address = self.address

            if address is None and may_guard(self.init_kwargs):
                # a cluster of our own, torn down however this command ends (SIGKILL too)
                self._guard = start_guarded_cluster()
                address = self._guard.address
                use_local_token()  # as ray.init does for a local cluster it finds itself
            try:
                ray.init(address=address, **kwargs)
            except ConnectionError as exc:
                self._stop_guard()
                raise UserError(
                    f"cannot join the Ray cluster at {self.address or 'RAY_ADDRESS'}: {exc}; "
                    "start it with `ray start --head` or check --ray-address"
                ) from None
            except BaseException:
                self._stop_guard()
                raise
            self._owns_cluster = True
        return ray

    def _stop_guard(self) -> None:
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.stop()

    def start(self) -> None:
        """Connect to (or start) the cluster, start the actors and wait until each has built
        its judges (idempotent)."""
        if self._actors:
            return
        ray = self._connect()
        # one thread more than the chunks an actor runs: the parent's stop gets through
        actor_cls = ray.remote(_Worker).options(
            max_concurrency=self.threads_per_worker + 1, num_cpus=self.num_cpus
        )
        self._actors = [actor_cls.remote(self._factory_blob) for _ in range(self.workers)]
        try:
            ready = ray.get([a.ready.remote() for a in self._actors])
        except Exception as exc:
            self._kill()
            raise WorkerError(f"a Ray worker could not start:\n{exc}") from None
        for status, detail in ready:
            if status != "ok":
                self._kill()
                if status == "user":
                    raise UserError(f"a Ray worker could not build its judges {detail}")
                raise WorkerError(f"a Ray worker could not build its judges {detail}")
        self._judge_ids = set.intersection(*(set(detail) for _, detail in ready))

    def close(self) -> None:
        """Stop the actors (and the cluster, if this executor started it)."""
        self._kill()
        if self._owns_cluster:
            ray = import_ray()
            if ray.is_initialized():
                ray.shutdown()
            self._owns_cluster = False
        self._stop_guard()

    def _kill(self) -> None:
        if self._actors:
            ray = import_ray()
            for actor in self._actors:
                try:
                    ray.kill(actor)
                except Exception:  # already dead
                    pass
        self._actors, self._judge_ids = [], set()

    # -- mapping ---------------------------------------------------------------------------

    def next_chunk_size(self, remaining: int | None = None) -> int:
        """``chunk_size`` if given; else 1 until a task's time t is measured, then
        ``ceil(max_concurrency / (CALLS_PER_S × t))``, at most :data:`MAX_CHUNK` and an even
        share of the ``remaining`` tasks over ``max_concurrency`` (all busy to the end)."""
        if self.chunk_size is not None:
            return self.chunk_size
        if self._task_s is None:
            return 1
        size = math.ceil(self.max_concurrency / (CALLS_PER_S * max(self._task_s, 1e-4)))
        if remaining is not None:
            size = min(size, math.ceil(remaining / self.max_concurrency))
        return max(1, min(MAX_CHUNK, size))

    def _open(self, fn: Callable[[Any], Any], tasks: Iterable[Any], stop: Any) -> Window:
        fn_blob = _pack_fn(fn, "Ray actors")
        self.start()
        ray = import_ray()
        ray.get([a.set_fn.remote(fn_blob) for a in self._actors])
        return _RayWindow(self, ray, len(tasks) if isinstance(tasks, Sized) else None, stop)


class _RayWindow(Window):
    """Chunks of tasks to the actor with the fewest calls in flight, each a streaming
    generator of results; ``stop`` relayed to every actor once."""

    def __init__(self, ex: RayExecutor, ray: Any, remaining: int | None, stop: Any) -> None:
        self.ex, self.ray, self.remaining, self.stop = ex, ray, remaining, stop
        self.calls = [0] * ex.workers  # chunks in flight per actor
        self.owner: dict[Any, int] = {}  # streaming generator -> actor
        self.cancelled = False

    def in_flight(self) -> int:
        return len(self.owner)

    def send(self, todo: Iterator[Any]) -> bool:
        chunk = list(itertools.islice(todo, self.ex.next_chunk_size(self.remaining)))
        if not chunk:
            return False
        if self.remaining is not None:
            self.remaining -= len(chunk)
        wid = min(range(self.ex.workers), key=self.calls.__getitem__)
        call = self.ex._actors[wid].run_chunk.options(num_returns="streaming")
        self.owner[call.remote([_pack(self.ex._wire(t)) for t in chunk])] = wid
        self.calls[wid] += 1
        return True

    def receive(self) -> Iterator[Any]:
        ray = self.ray
        if self.stop is not None and self.stop.is_set() and not self.cancelled:
            self.cancelled = True
            for actor in self.ex._actors:
                actor.set_cancel.remote()
        ready, rest = ray.wait(list(self.owner), num_returns=1, timeout=_WAIT_S)
        if ready and rest:  # every generator with a result ready, in one call
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        for blob in self._next_results(ready):
            msg = pickle.loads(blob)
            if msg[0] == "task_error":
                raise WorkerError(f"a task raised in a Ray worker:\n{msg[1]}")
            t = self.ex._task_s
            self.ex._task_s = msg[2] if t is None else 0.8 * t + 0.2 * msg[2]
            yield msg[1]

    def close(self, clean: bool) -> None:
        if not clean:  # an error or an abandoned iterator: drop the actors and what they hold
            self.ex._kill()

    def _next_results(self, ready: list[Any]) -> Iterator[bytes]:
        """The next result of each ready generator (finished ones are dropped), in one
        ``ray.get``; when a worker died, the others' results first (they are recorded), then
        the error."""
        ray, owner, calls = self.ray, self.owner, self.calls
        refs = []
        for gen in ready:
            try:
                refs.append(next(gen))
            except StopIteration:
                calls[owner.pop(gen)] -= 1
        try:
            batches: list[list[bytes]] = ray.get(refs) if refs else []
        except ray.exceptions.RayActorError:
            dead: Exception | None = None
            for ref in refs:
                try:
                    yield from ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    dead = dead or exc
            raise WorkerError(
                f"a Ray worker died ({type(dead).__name__}: {str(dead)[:500]}); its "
                "in-flight tasks were not recorded (the same command resumes them)"
            ) from None
        for batch in batches:
            yield from batch
