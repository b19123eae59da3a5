"""``run_score``: the Python equivalent of ``attune-judge score``: the items and judges of a
:class:`~attune_judge.runner._score.ScoreConfig` planned and run with :func:`run_tasks` on the
config's executor or, with ``--batch``, the provider's batch API.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from attune_judge.data import JudgeSpec, LMSpec
from attune_judge.errors import UserError
from attune_judge.judges import Judge
from attune_judge.lm import server_identity
from attune_judge.runner._batch import BatchExecutor
from attune_judge.runner._batch_api import OpenAIBatchClient
from attune_judge.runner._cost import Pricing
from attune_judge.runner._executor import Executor
from attune_judge.runner._inputs import fingerprint_inputs
from attune_judge.runner._plan import Task, plan_tasks
from attune_judge.runner._result import RunResult
from attune_judge.runner._run import run_tasks
from attune_judge.runner._scale import config_executor, run_arguments
from attune_judge.runner._score import (
    ScoreConfig,
    build_score_judge,
    build_score_judges,
    execution_options,
    score_items,
    score_lms,
)

__all__ = ["run_score", "score_batch_executor"]


def score_batch_executor(config: ScoreConfig, judges: Sequence[Judge]) -> BatchExecutor:
    """The batch executor of a ``score --batch`` run: the judges rebuilt against the
    collector (same ids), the provider's files and batches endpoints at ``config.api_base``
    (default ``https://api.openai.com/v1``), the key from ``OPENAI_API_KEY``.

    Raises
    ------
    UserError
        A model that is not ``openai/...`` (the batch API is OpenAI's), or a judge without a
        model (baselines).
    """
    lms = score_lms(config)
    if len(lms) != 1:
        raise UserError("--batch takes one judge model (one --lm): a jury is not batched")
    if not lms[0].startswith("openai/"):
        raise UserError(
            f"--batch needs an OpenAI-compatible model (openai/<model>, with --api-base for "
            f"another server), not {lms[0]!r}"
        )
    formats = []
    for judge in judges:
        lm = JudgeSpec.of(judge.spec).lm
        if not isinstance(lm, LMSpec) or lm.response_format is None:
            raise UserError(f"--batch: judge {judge.judge_id!r} makes no model calls")
        formats.append(lm.response_format)

    def judges_for(url: str) -> list[Judge]:
        with server_identity(api_base):  # the collector answers as the real server
            return [_batch_judge(url, fmt) for fmt in formats]

    def _batch_judge(url: str, fmt: str) -> Judge:
        settings = config.lm_settings.model_copy(update={"api_base": url, "response_format": fmt})
        return build_score_judge(config.model_copy(update={"lm_settings": settings}))

    api_base = config.lm_settings.api_base
    client = OpenAIBatchClient(
        api_base or "https://api.openai.com/v1", os.environ.get("OPENAI_API_KEY")
    )
    return BatchExecutor(
        config.out,
        judges_for,
        client,
        poll_s=config.batch_poll_s,
        concurrency=config.max_concurrency,
    )


def _start_request_cache(config: ScoreConfig) -> None:
    """Start opening the judges' request cache now, so that its disk shards open (in a thread:
    :func:`attune_judge.lm.configure_cache`) while the items are read and the judges built;
    the judges' own ``configure_cache`` with the same settings then keeps it. A problem with
    the cache is left for the judges to report where they always did."""
    from attune_judge.judges import BASELINES
    from attune_judge.lm import start_request_cache

    if config.rubric not in BASELINES:  # a baseline asks no model: no request cache
        start_request_cache(config.lm_settings.cache_dir)


def _check_references(config: ScoreConfig, judges: Sequence[Judge], items: Sequence[Any]) -> None:
    """Refuse up front a run whose judge needs the reference reply on data that has none."""
    if any(i.reference for i in items):
        return
    members = [m for j in judges for m in (getattr(j, "members", None) or [j])]
    if any(getattr(m, "use_reference", False) for m in members):
        raise UserError(
            f"{config.data}: no item has a reference reply, and rubric {config.rubric!r} shows "
            "the judge one; judge without it: --no-reference"
        )


def _arguments(config: ScoreConfig) -> dict[str, Any]:
    args = run_arguments(config, "quiet")
    if not config.lm_settings.decoding_options():  # manifests without options stay as they were
        args.pop("model_options", None)
    if config.use_reference is None:
        args.pop("use_reference", None)
    return args


def run_score(
    config: ScoreConfig,
    *,
    judges: Sequence[Judge] | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Score candidates with a judge into a run directory (resuming it if it exists).

    Parameters
    ----------
    config
        The command's arguments.
    judges
        Judges to use instead of building one from ``config.rubric`` and ``config.lm`` (tests,
        juries, other commands). Their specs go into the manifest.
    executor
        Where the tasks run (default: per ``config.executor``, threads, a
        :class:`ProcessExecutor` of ``config.workers`` processes or a :class:`RayExecutor` of
        ``config.workers`` actors, ``config.max_concurrency`` tasks in flight).

    Returns
    -------
    RunResult
        With the summary; ``exit_code`` 3 when the failure budget stopped the run.

    Raises
    ------
    UserError
        Bad data, candidates, rubric or model; a run directory holding another run.
    """
    if judges is None:
        _start_request_cache(config)
    items = score_items(config)
    if not items:
        raise UserError(f"{config.data}: nothing to judge (no annotated turns with candidates)")
    paths = list(dict.fromkeys([config.data] + ([config.candidates] if config.candidates else [])))
    fingerprint, inputs = fingerprint_inputs(paths)
    judge_list = list(judges) if judges is not None else build_score_judges(config)
    _check_references(config, judge_list, items)
    tasks = plan_tasks(items, judge_list)
    pricing = Pricing(
        price_in=config.price_in,
        price_out=config.price_out,
        api_base=config.lm_settings.api_base,
    )
    return _run(config, tasks, judges, judge_list, executor, inputs, fingerprint, pricing)


def _run(
    config: ScoreConfig,
    tasks: Sequence[Task],
    judges: Sequence[Judge] | None,
    judge_list: Sequence[Judge],
    executor: Executor | None,
    inputs: Any,
    fingerprint: str,
    pricing: Pricing,
) -> RunResult:
    """``run_tasks`` on the batch executor (``--batch``) or the config's executor."""
    if config.batch and executor is None:
        if config.executor != "thread":
            raise UserError("--batch runs the model calls at the provider: drop --executor")
        where: Any = score_batch_executor(config, judge_list)
    else:
        where = _scaled(config, judges, judge_list, executor)
    with where as own:
        return run_tasks(
            config.out,
            tasks,
            command="score",
            arguments=_arguments(config),
            inputs=inputs,
            data_fingerprint=fingerprint,
            executor=own,
            **execution_options(config),
            fsync_interval_s=config.fsync_interval_s,
            B=config.B,
            level=config.level,
            pricing=pricing,
            max_cost=config.max_cost,
        )


def _scaled(
    config: ScoreConfig,
    judges: Sequence[Judge] | None,
    judge_list: Sequence[Judge],
    executor: Executor | None,
) -> Any:
    """The config's executor (threads, processes or Ray actors), checked against the judges."""
    kind = config.executor if executor is None else "thread"
    if kind != "thread" and len(judge_list) > 1 and judges is None:
        raise UserError(
            f"--executor {kind} runs one judge per run: use a jury (--jury mean/median/"
            "majority) or --executor thread for several independent judges"
        )
    return config_executor(
        config,
        executor,
        build_score_judge,
        "builds the judge from the config in each worker; with your own judges pass "
        "executor=ProcessExecutor(JudgeFactory(...)) (or RayExecutor) instead"
        if judges is not None
        else None,
    )
