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
- ``max_concurrency`` is split over the actors (``ceil(max_concurrency / workers)`` threads
  each: actors are threaded); the parent never has more than ``max_concurrency`` tasks in
  flight and sends each one to the actor with the fewest in flight.
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

import math
import os
import pickle
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from attune_judge.errors import UserError
from attune_judge.runner._plan import Task
from attune_judge.runner._process import JudgeFactory, WorkerError, _TaskRef

__all__ = ["RayExecutor", "import_ray"]

T = TypeVar("T")
R = TypeVar("R")

_WAIT_S = 0.5


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
        payload = pickle.loads(blob)
        if isinstance(payload, _TaskRef):
            payload = Task(payload.item, self.judges[payload.judge_id])
        assert self.fn is not None, "set_fn first"
        try:
            return _pack(("result", self.fn(payload)))
        except BaseException:
            return _pack(("task_error", traceback.format_exc()))


class RayExecutor:
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
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        try:
            self._factory_blob = _pack(factory)
        except Exception as exc:
            raise ValueError(
                f"the judge factory cannot be sent to Ray actors ({exc}); use a module-level "
                "function with picklable arguments"
            ) from exc
        self.factory = factory
        self.workers = workers
        self.max_concurrency = max_concurrency
        self.threads_per_worker = math.ceil(max_concurrency / workers)
        self.address = address
        self.num_cpus = num_cpus
        self.init_kwargs = dict(init_kwargs or {})
        self._owns_cluster = False
        self._guard: Any = None
        self._actors: list[Any] = []
        self._judge_ids: set[str] = set()

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
            if address is None and self._may_guard():
                # a cluster of our own, torn down however this command ends (SIGKILL too)
                from attune_judge.runner._ray_guard import start_guarded_cluster

                self._guard = start_guarded_cluster()
                address = self._guard.address
                _use_local_token()  # as ray.init does for a local cluster it finds itself
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

    def _may_guard(self) -> bool:
        """Whether ``ray.init()`` would start a local cluster (no ``RAY_ADDRESS``, no cluster
        ``ray start`` left here), which a guard can start instead (see ``_ray_guard.py``)."""
        from ray._private.services import canonicalize_bootstrap_address

        from attune_judge.runner._ray_guard import guard_supported

        start_only = {"num_cpus", "num_gpus", "resources", "labels", "object_store_memory"}
        if not guard_supported() or start_only & set(self.init_kwargs):
            return False
        try:
            unset: Any = None  # Ray's own annotation says str; None is what ray.init() passes
            return canonicalize_bootstrap_address(unset) is None
        except Exception:  # an unreadable address file: let ray.init decide, as before
            return False

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
        actor_cls = ray.remote(_Worker).options(
            max_concurrency=self.threads_per_worker, num_cpus=self.num_cpus
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

    def _wire(self, task: Any) -> bytes:
        if isinstance(task, Task):
            if task.judge.judge_id not in self._judge_ids:
                raise WorkerError(
                    f"the judge factory did not build judge {task.judge.judge_id!r} needed by "
                    f"the plan (the workers have {sorted(self._judge_ids)}): build the same "
                    "judges"
                )
            task = _TaskRef(task.item, task.judge.judge_id)
        return _pack(task)

    def map_unordered(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        *,
        stop: threading.Event | None = None,
    ) -> Iterator[R]:
        """See :meth:`Executor.map_unordered`; ``fn`` and the tasks must be picklable (a
        :class:`Task` is sent as its item and judge id)."""
        try:
            fn_blob = _pack(fn)
        except Exception as exc:
            raise ValueError(
                f"the task function cannot be sent to Ray actors ({exc}): use a module-level "
                "function or a picklable object such as JudgeTaskFn"
            ) from exc
        self.start()
        ray = import_ray()
        ray.get([a.set_fn.remote(fn_blob) for a in self._actors])
        todo = iter(tasks)
        load = [0] * self.workers
        owner: dict[Any, int] = {}
        cancelled = False
        clean = False
        try:
            exhausted = False
            while True:
                while not exhausted and len(owner) < self.max_concurrency:
                    if stop is not None and stop.is_set():
                        exhausted = True
                        break
                    task = next(todo, _DONE)
                    if task is _DONE:
                        exhausted = True
                        break
                    wid = min(range(self.workers), key=load.__getitem__)
                    ref = self._actors[wid].run.remote(self._wire(task))
                    owner[ref] = wid
                    load[wid] += 1
                if not owner:
                    break
                if stop is not None and stop.is_set() and not cancelled:
                    cancelled = True
                    for actor in self._actors:
                        actor.set_cancel.remote()
                done, rest = ray.wait(list(owner), num_returns=1, timeout=_WAIT_S)
                if done and rest:  # take every result that is ready, in one call each
                    more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                    done += more
                for ref, blob in self._get(ray, done):
                    load[owner.pop(ref)] -= 1
                    msg = pickle.loads(blob)
                    if msg[0] == "task_error":
                        raise WorkerError(f"a task raised in a Ray worker:\n{msg[1]}")
                    yield msg[1]
            clean = True
        finally:
            if not clean:
                # an error or an abandoned iterator: drop the actors and what they hold
                self._kill()

    def _get(self, ray: Any, refs: list[Any]) -> Iterator[tuple[Any, bytes]]:
        """``(ref, result)`` of finished tasks: one ``ray.get`` for all of them; when a worker
        died, the others' results first (they are recorded), then the error."""
        if not refs:
            return
        try:
            blobs: list[bytes] = ray.get(refs)
        except ray.exceptions.RayActorError:
            dead: Exception | None = None
            for ref in refs:
                try:
                    one: bytes = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    dead = dead or exc
                    continue
                yield ref, one
            if dead is not None:
                raise WorkerError(
                    f"a Ray worker died ({type(dead).__name__}: {str(dead)[:500]}); its "
                    "in-flight tasks were not recorded (the same command resumes them)"
                ) from None
            return
        yield from zip(refs, blobs, strict=True)


_DONE = object()


def _use_local_token() -> None:
    """Token authentication with this machine's token, which ``ray start`` enabled (Ray turns
    it on only for a cluster it finds itself, never for an address it is given)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # pragma: no cover - a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def _pack(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
