"""Choosing the executor of a command: threads, worker processes, or Ray actors.

Every run command (``score``, ``generate``, ``sensitivity``, ``bench``, ``validate``) has the
same three settings — ``executor``, ``workers``, ``ray_address`` — and builds the judges of a
worker from a :class:`~attune_judge.runner.JudgeFactory` (a module-level function of the
command's config), so the parent and every worker hold judges with the same ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from attune_judge.runner._executor import Executor
from attune_judge.runner._process import JudgeFactory, ProcessExecutor
from attune_judge.runner._ray import RayExecutor, import_ray

__all__ = ["EXECUTOR_FIELDS", "ExecutorName", "config_executor", "run_arguments", "scaled_executor"]

ExecutorName = Literal["thread", "process", "ray"]
"""``thread``: this process; ``process``: worker processes; ``ray``: Ray actors."""

EXECUTOR_FIELDS = ("executor", "workers", "ray_address")
"""Config fields of the executor choice (left out of thread runs' manifests)."""


@contextmanager
def scaled_executor(
    kind: str,
    factory: JudgeFactory | None,
    *,
    workers: int = 2,
    max_concurrency: int = 8,
    ray_address: str | None = None,
) -> Iterator[Executor | None]:
    """The executor for ``kind`` (``None`` for threads: the runner's default), closed at the
    end of the block (a Ray cluster it started is shut down).

    Raises
    ------
    ValueError
        An unknown ``kind``.
    UserError
        ``ray`` without Ray installed, or an unreachable ``ray_address``.
    """
    executor: Any
    if kind == "thread":
        yield None
        return
    if kind == "process":
        executor = ProcessExecutor(factory, workers=workers, max_concurrency=max_concurrency)
    elif kind == "ray":
        import_ray()  # a clear message before anything starts
        executor = RayExecutor(
            factory, workers=workers, max_concurrency=max_concurrency, address=ray_address
        )
    else:
        raise ValueError(f"unknown executor {kind!r}: thread, process or ray")
    try:
        yield executor
    finally:
        executor.close()


def run_arguments(config: Any, *drop: str, options_after: str | None = None) -> dict[str, Any]:
    """``config`` as a run's manifest records it: without the keys ``drop`` and, for thread
    runs, without the executor fields (manifests of thread runs stay as they were). A config's
    ``lm_settings`` is recorded as manifests always did: its ``api_base`` in its place, its
    decoding options as ``model_options`` there too or after the key ``options_after``."""
    args: dict[str, Any] = config.model_dump(mode="json")
    for key in drop + (EXECUTOR_FIELDS if config.executor == "thread" else ()):
        args.pop(key, None)
    if "lm_settings" not in args:
        return args
    settings = args["lm_settings"]
    options = {k: settings[k] for k in ("temperature", "max_tokens", "response_format", "timeout")}
    recorded: dict[str, Any] = {}
    for key, value in args.items():
        if key == "lm_settings":
            recorded["api_base"] = settings["api_base"]
            if options_after is None:
                recorded["model_options"] = options
        else:
            recorded[key] = value
        if key == options_after:
            recorded["model_options"] = options
    return recorded


@contextmanager
def config_executor(
    config: Any,
    executor: Executor | None,
    build: Callable[..., Any],
    own: str | None = None,
) -> Iterator[Executor | None]:
    """The executor a run command uses: the caller's ``executor``, else the one ``config`` asks
    for (``executor``, ``workers``, ``max_concurrency``, ``ray_address``), whose workers build
    their judges with ``build(config)``. ``own``: why components the caller built cannot go to
    worker processes (a ``ValueError`` when ``config`` asks for them)."""
    kind = config.executor if executor is None else "thread"
    if kind != "thread" and own:
        raise ValueError(f"executor={kind!r} {own}")
    with scaled_executor(
        kind,
        JudgeFactory(build, (config,)),
        workers=config.workers,
        max_concurrency=config.max_concurrency,
        ray_address=config.ray_address,
    ) as scaled:
        yield executor or scaled
