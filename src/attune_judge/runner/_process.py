"""A process-based executor: N worker processes, each with a bounded thread pool.

One Python process judges on one core at a time (the GIL), and a DSPy judgment costs a few
milliseconds of CPU (prompt building, the call path, the disk-cache write), so a fast engine
makes a run CPU-bound. :class:`ProcessExecutor` spreads the tasks over ``workers`` processes.

- Workers are started with the ``spawn`` context (``forkserver`` on request), never ``fork``:
  forking a process that already runs threads (or holds a llama.cpp model) is unsafe.
- Judges cannot be pickled (they hold LM clients, locks, models), so each worker builds its own
  once from a :class:`JudgeFactory` — a module-level callable and its arguments. A
  :class:`~attune_judge.runner.Task` crosses the process boundary as ``(item, judge_id)`` and is
  re-joined to the worker's judge of that id; the worker's judges must have the ids of the
  judges in the plan (checked before the first task is sent).
- ``max_concurrency`` is split over the workers (``ceil(max_concurrency / workers)`` threads
  each); the parent never has more than ``max_concurrency`` tasks in flight, and sends each task
  to the worker with the fewest in flight.
- Results stream back to the parent, which alone writes the run directory: resume and crash
  guarantees are those of the thread executor.
- Retries happen in the workers, as in the thread executor (the task function is pickled; see
  :class:`~attune_judge.runner._executor.JudgeTaskFn`); ``stop`` is relayed to them as a shared
  event.
- A worker that dies (killed, segfault, out of memory) raises :class:`WorkerError` in the
  parent instead of hanging; its in-flight tasks are not recorded and a resume redoes them.
- Stopping is bounded whatever the number of workers (Ctrl-C included): every worker is sent
  SIGTERM in one pass and all are waited for against one shared deadline, then the ones left
  are killed. Closing while a map is still open (its consumer raised: Ctrl-C while a judgment
  was being written) terminates the workers instead of waiting for their in-flight tasks,
  whose results nobody would read.

The in-process ``local`` model is loaded once per worker (memory and load time times
``workers``); with one llama.cpp model per process there is no GIL to share, so it is the
cores, not Python, that bound it.
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import pickle
import queue
import signal
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from attune_judge.judges import Judge
from attune_judge.lm import share_request_cache
from attune_judge.runner._executor import DONE, Window, WindowExecutor
from attune_judge.runner._plan import Task

__all__ = ["JudgeFactory", "ProcessExecutor", "WorkerError"]

_POLL_S = 0.1
_PARENT_CHECK_S = 0.5
_STOP_S = 30.0
"""Longest wait, shared by all workers, for them to exit after a finished map."""
_TERM_GRACE_S = 0.4
"""Longest wait, shared by all workers, after SIGTERM (and again after SIGKILL)."""


class WorkerError(RuntimeError):
    """A worker process failed: it died, its judge factory raised, or a task raised."""


@dataclass(frozen=True)
class JudgeFactory:
    """A picklable recipe for the judges of a run: ``fn(*args, **kwargs)``.

    ``fn`` must be importable by name (a module-level function or class) and the arguments
    picklable; it returns one judge or a sequence of judges.
    """

    fn: Callable[..., Judge | Sequence[Judge]]
    """Module-level callable building the judge(s)."""
    args: tuple[Any, ...] = ()
    """Positional arguments."""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments."""

    def build(self) -> list[Judge]:
        """Call the recipe; always a list."""
        made = self.fn(*self.args, **dict(self.kwargs))
        return list(made) if isinstance(made, Sequence) else [made]


@dataclass(frozen=True)
class _TaskRef:
    """A :class:`Task` on the wire: the item and the id of the worker-side judge."""

    item: Any
    judge_id: str


def _worker_main(
    factory: JudgeFactory | None,
    inbox: Any,
    outbox: Any,
    cancel: Any,
    threads: int,
    wid: int,
) -> None:
    """Worker process: build the judges, then run tasks from ``inbox`` on ``threads`` threads.

    Ctrl-C is the parent's to handle (it terminates the workers); a worker whose parent died
    (SIGKILL, out of memory) exits by itself instead of lingering.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # as resolve_lm does: LiteLLM would otherwise try to download its price list on import
    # (seconds of retries offline) in every worker
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    share_request_cache()  # the other workers store into it during the run
    parent = multiprocessing.parent_process()
    try:
        judges = {j.judge_id: j for j in factory.build()} if factory is not None else {}
    except BaseException:
        outbox.put(_pack(("setup_error", wid, traceback.format_exc())))
        return
    outbox.put(_pack(("ready", wid, sorted(judges))))
    fn: Callable[[Any], Any] | None = None

    def run(seq: int, payload: Any, task_fn: Callable[[Any], Any]) -> None:
        try:
            if isinstance(payload, _TaskRef):
                payload = Task(payload.item, judges[payload.judge_id])
            outbox.put(_pack(("result", seq, task_fn(payload))))
        except BaseException:
            outbox.put(_pack(("task_error", seq, traceback.format_exc())))

    with ThreadPoolExecutor(threads, thread_name_prefix=f"attune-worker{wid}") as pool:
        while True:
            try:
                msg = pickle.loads(inbox.get(timeout=_PARENT_CHECK_S))
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    os._exit(1)  # orphaned: nobody will read our results
                continue
            if msg[0] == "stop":
                break
            if msg[0] == "fn":
                fn = msg[1]
                rebind = getattr(fn, "with_cancel", None)
                if callable(rebind):
                    fn = rebind(cancel)
            elif msg[0] == "task" and fn is not None:
                pool.submit(run, msg[1], msg[2], fn)


class WorkerPool(WindowExecutor):
    """What the process and Ray executors share: their sizes, the judge ids their workers
    built, the sliding window (:class:`WindowExecutor`; ``fn`` and the tasks must be
    picklable, a :class:`Task` is sent as its item and judge id), and closing them at the end
    of a ``with`` block."""

    def __init__(self, factory: JudgeFactory | None, workers: int, max_concurrency: int) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.factory = factory
        self.workers = workers
        self.max_concurrency = max_concurrency
        self.threads_per_worker = math.ceil(max_concurrency / workers)
        self._judge_ids: set[str] = set()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        raise NotImplementedError

    def _wire(self, task: Any) -> Any:
        """What crosses to a worker: a :class:`Task` as its item and judge id."""
        if not isinstance(task, Task):
            return task
        if task.judge.judge_id not in self._judge_ids:
            raise WorkerError(
                f"the judge factory did not build judge {task.judge.judge_id!r} needed by the "
                f"plan (the workers have {sorted(self._judge_ids)}): build the same judges"
            )
        return _TaskRef(task.item, task.judge.judge_id)


class ProcessExecutor(WorkerPool):
    """Runs tasks in ``workers`` processes of ``ceil(max_concurrency / workers)`` threads each.

    Parameters
    ----------
    factory
        Builds the judges in each worker (needed for :class:`Task` s; other picklable tasks
        run without it).
    workers
        Worker processes (default 2).
    max_concurrency
        Tasks in flight over all workers.
    start_method
        ``"spawn"`` (default, everywhere) or ``"forkserver"`` (POSIX).
    start_timeout_s
        Longest wait for the workers to build their judges.

    Workers start on first use and stay up for the next :meth:`map_unordered` until
    :meth:`close` (or the end of a ``with`` block); they are daemons, so they never outlive the
    parent. An early exit of a map (an error, the consumer closing the iterator) terminates
    them, and the next map starts fresh ones.
    """

    def __init__(
        self,
        factory: JudgeFactory | None = None,
        *,
        workers: int = 2,
        max_concurrency: int = 8,
        start_method: Literal["spawn", "forkserver"] = "spawn",
        start_timeout_s: float = 600.0,
    ) -> None:
        super().__init__(factory, workers, max_concurrency)
        if factory is not None:
            _pack_fn(factory, "worker processes", _FACTORY)
        self.start_timeout_s = start_timeout_s
        self._ctx: Any = multiprocessing.get_context(start_method)
        self._procs: list[Any] = []
        self._inboxes: list[Any] = []
        self._outbox: Any = None
        self._cancel: Any = None
        self._open_windows = 0  # maps begun and not yet closed

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers and wait until each has built its judges (idempotent)."""
        if self._procs:
            return
        self._outbox = self._ctx.Queue()
        self._cancel = self._ctx.Event()
        for wid in range(self.workers):
            inbox = self._ctx.Queue()
            proc = self._ctx.Process(
                target=_worker_main,
                args=(
                    self.factory,
                    inbox,
                    self._outbox,
                    self._cancel,
                    self.threads_per_worker,
                    wid,
                ),
                name=f"attune-worker-{wid}",
                daemon=True,
            )
            proc.start()
            self._inboxes.append(inbox)
            self._procs.append(proc)
        try:
            ready: list[set[str]] = []
            deadline = _Deadline(self.start_timeout_s)
            while len(ready) < self.workers:
                msg = self._receive(deadline)
                if msg[0] == "setup_error":
                    raise WorkerError(f"worker {msg[1]} could not build its judges:\n{msg[2]}")
                if msg[0] == "ready":
                    ready.append(set(msg[2]))
            self._judge_ids = set.intersection(*ready)
        except BaseException:
            self._terminate()
            raise

    def close(self) -> None:
        """Stop the workers: after a finished map they exit at once; while a map is still open
        (its consumer stopped on an error or Ctrl-C, and nobody will read what is in flight)
        they are terminated, not waited for. Bounded overall: every worker is told at once and
        waited for against one shared deadline (``_STOP_S``, then :meth:`_terminate`)."""
        if not self._procs:
            return
        if self._open_windows:
            self._terminate()
            return
        for inbox in self._inboxes:
            inbox.put(_pack(("stop",)))
        _wait_exit(self._procs, _Deadline(_STOP_S))
        self._terminate()

    def _terminate(self) -> None:
        """SIGTERM to every worker in one pass, one shared deadline (``_TERM_GRACE_S``) for all
        of them to exit, SIGKILL to those left, another shared deadline: at most
        ``2 * _TERM_GRACE_S`` whatever the number of workers (their in-flight tasks are lost:
        not recorded, a resume redoes them)."""
        procs = self._procs
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        left = _wait_exit(procs, _Deadline(_TERM_GRACE_S))
        for proc in left:
            proc.kill()
        _wait_exit(left, _Deadline(_TERM_GRACE_S))
        for q in [*self._inboxes, self._outbox]:
            if q is not None:
                q.close()
                q.cancel_join_thread()
        self._procs, self._inboxes, self._outbox, self._judge_ids = [], [], None, set()
        self._open_windows = 0

    def _receive(self, deadline: _Deadline | None = None) -> tuple[Any, ...]:
        """The next message from the workers; raises :class:`WorkerError` if one died."""
        while True:
            try:
                msg: tuple[Any, ...] = pickle.loads(self._outbox.get(timeout=_POLL_S))
                return msg
            except queue.Empty:
                pass
            for wid, proc in enumerate(self._procs):
                if not proc.is_alive():
                    try:  # what it sent just before it exited comes first
                        late: tuple[Any, ...] = pickle.loads(self._outbox.get(timeout=_POLL_S))
                        return late
                    except queue.Empty:
                        pass
                    raise WorkerError(
                        f"worker process {wid} (pid {proc.pid}) died with exit code "
                        f"{proc.exitcode}; its in-flight tasks were not recorded (the same "
                        "command resumes them)"
                    )
            if deadline is not None and deadline.passed():
                raise WorkerError(
                    f"the workers did not build their judges within {self.start_timeout_s:g} s"
                )

    # -- mapping ---------------------------------------------------------------------------

    def _open(self, fn: Callable[[Any], Any], tasks: Iterable[Any], stop: Any) -> Window:
        fn_msg = _pack_fn(("fn", fn), "worker processes")
        self.start()
        self._cancel.clear()
        for inbox in self._inboxes:
            inbox.put(fn_msg)
        self._open_windows += 1
        return _ProcessWindow(self, stop)


class _ProcessWindow(Window):
    """Each task to the worker with the fewest in flight; ``stop`` relayed as the shared
    cancel event."""

    def __init__(self, ex: ProcessExecutor, stop: Any) -> None:
        self.ex = ex
        self.stop = stop
        self.load = [0] * ex.workers
        self.owner: dict[int, int] = {}  # task number -> worker
        self.seq = 0
        self.procs = ex._procs  # the workers of this map (a later map may have new ones)

    def in_flight(self) -> int:
        return len(self.owner)

    def send(self, todo: Iterator[Any]) -> bool:
        task = next(todo, DONE)
        if task is DONE:
            return False
        wid = min(range(self.ex.workers), key=self.load.__getitem__)
        self.ex._inboxes[wid].put(_pack(("task", self.seq, self.ex._wire(task))))
        self.owner[self.seq] = wid
        self.load[wid] += 1
        self.seq += 1
        return True

    def receive(self) -> Iterator[Any]:
        msg = self.ex._receive()
        if msg[0] == "task_error":
            raise WorkerError(f"a task raised in a worker process:\n{msg[2]}")
        if msg[0] == "result":
            self.load[self.owner.pop(msg[1])] -= 1
            yield msg[2]
        if self.stop is not None and self.stop.is_set():
            self.ex._cancel.set()

    def stopping(self) -> None:
        self.ex._cancel.set()

    def close(self, clean: bool) -> None:
        if self.ex._procs is not self.procs:
            return  # its workers are gone already (closed, or terminated by another map)
        if not clean:  # an error or an abandoned iterator: drop the workers and what they hold
            self.ex._terminate()
        else:
            self.ex._open_windows -= 1


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def passed(self) -> bool:
        return time.monotonic() > self._end

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())


def _wait_exit(procs: Sequence[Any], deadline: _Deadline) -> list[Any]:
    """Wait for all of ``procs`` at once (their sentinels) until they have exited or
    ``deadline`` passes; reap the exited ones; the ones still alive."""
    alive = [p for p in procs if p.exitcode is None]
    while alive:
        remaining = deadline.remaining()
        if remaining <= 0:
            break
        mp_connection.wait([p.sentinel for p in alive], timeout=remaining)
        alive = [p for p in alive if p.exitcode is None]
    for proc in procs:
        if proc.exitcode is not None:
            proc.join(0)  # reaped: no zombie left
    return alive


_FACTORY = ("the judge factory", "a module-level function with picklable arguments")


def _pack_fn(
    msg: Any,
    where: str,
    what: tuple[str, str] = (
        "the task function",
        "a module-level function or a picklable object such as JudgeTaskFn",
    ),
) -> bytes:
    """``msg`` holding the task function (or ``_FACTORY``, the judge factory), pickled; a
    ``ValueError`` when it cannot go to ``where``."""
    try:
        return _pack(msg)
    except Exception as exc:
        raise ValueError(f"{what[0]} cannot be sent to {where} ({exc}): use {what[1]}") from exc


def _pack(msg: Any) -> bytes:
    """Pickle here, not in the queue's feeder thread, where a failure is only printed and the
    message lost (the receiver would wait for ever)."""
    return pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
