"""Running a plan into a run directory: resume, execute, record, summarise.

:func:`run_tasks` is generic — any list of (item, judge) tasks — so other commands (AttuneBench
tasks, rubric sensitivity) reuse it with their own judges. :func:`run_score` (in ``_score.py``)
is the ``attune-judge score`` command built on it.

Resume rules (documented in the README of the run directory contract):

- a task whose effective judgment has status ``ok``, ``parse_error`` or ``refused`` is finished
  and skipped; ``lm_error`` is retried (the model never answered, so nothing was paid and
  nothing is cached);
- ``retry_failed`` (``--retry-failed``): only the tasks whose effective judgment is
  ``lm_error`` or ``parse_error`` are judged again (``refused`` is the judge's verdict on the
  item, which asks no model; a task with no judgment yet is left to a plain resume); the new
  records are appended and, being last, are the effective judgments;
- a torn last line of ``judgments.jsonl`` is cut off (kept in ``judgments.jsonl.torn``) and
  logged;
- a directory made by other judges (another rubric, model or decoding), other data or other
  models is refused with a message: judgments are never mixed silently. Inside one run with
  several judges the summary is per ``judge_id``.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.data import JudgeSpec, Judgment
from attune_judge.errors import Interrupted, UserError
from attune_judge.lm import library_output_to
from attune_judge.runner._cost import (
    Pricing,
    check_prices,
    cost_message,
    judgment_cost,
    spent_usd,
)
from attune_judge.runner._executor import (
    ConcurrencyLimit,
    Executor,
    JudgeTaskFn,
    RetryPolicy,
    ThreadExecutor,
    WindowExecutor,
)
from attune_judge.runner._plan import Task, TaskKey, pending_tasks
from attune_judge.runner._progress import make_progress
from attune_judge.runner._result import FAILED_STATUSES, FailureBudget, RunResult
from attune_judge.runner._store import (
    FINISHED_STATUSES,
    RunDir,
    RunManifest,
    effective_judgments,
    versions,
)
from attune_judge.runner._summary import summarize
from attune_judge.runs import (
    JudgedSummary,
    RunSummary,
    read_summary,
    write_summary,
)

__all__ = ["RUN_LOG", "run_tasks"]

RUN_LOG = "run.log"
"""DSPy's and LiteLLM's own log lines during a run (not on the console)."""

log = logging.getLogger(__name__)


def _execute(
    run_dir: RunDir,
    pending: Sequence[Task],
    *,
    executor: Executor,
    retry: RetryPolicy,
    budget: FailureBudget,
    quiet: bool,
    fsync_interval_s: float | None,
    effective: dict[TaskKey, Judgment],
    counts: Counter[str],
    pricing: Pricing | None = None,
    max_cost: float | None = None,
    limit: ConcurrencyLimit | None = None,
) -> str | None:
    stop = threading.Event()
    stopped: str | None = None
    fn = JudgeTaskFn(retry, stop)
    specs = {t.judge.judge_id: JudgeSpec.of(t.judge.spec) for t in pending}
    spent = spent_usd(effective.values())
    try:
        with (
            run_dir.appender(fsync_interval_s=fsync_interval_s) as writer,
            make_progress(len(pending), quiet=quiet) as bar,
            library_output_to(run_dir.path / RUN_LOG),
        ):
            results = (
                executor.map_unordered(fn, pending, stop=stop, limit=limit)
                if isinstance(executor, WindowExecutor)
                else executor.map_unordered(fn, pending, stop=stop)
            )
            for judgment in results:
                if pricing is not None and judgment.cost is None:
                    judgment.cost = judgment_cost(
                        judgment, specs.get(judgment.judge_id) or JudgeSpec(), pricing
                    )
                spent += judgment.cost or 0.0
                writer.append(judgment)
                effective[(judgment.item_id, judgment.judge_id)] = judgment
                counts[judgment.status] += 1
                bar.advance(failed=judgment.status != "ok")
                n = sum(counts.values())
                failed = sum(counts[s] for s in FAILED_STATUSES)
                if stopped is None and budget.exceeded(n, failed):
                    stop.set()
                    stopped = budget.message(n, failed, counts)
                if stopped is None and max_cost is not None and spent >= max_cost:
                    stop.set()
                    stopped = cost_message(spent, max_cost)
    except BaseException:
        stop.set()  # workers stop retrying and backing off at once
        raise
    n = sum(counts.values())
    failed = sum(counts[s] for s in FAILED_STATUSES)
    if stopped is None and n < budget.min_attempts and budget.exceeded_at_end(n, failed):
        stopped = budget.message(n, failed, counts)
    return stopped


def run_tasks(
    out: Path,
    tasks: Sequence[Task],
    *,
    command: str,
    arguments: Mapping[str, Any],
    inputs: Mapping[str, str],
    data_fingerprint: str,
    seed: int = 0,
    executor: Executor | None = None,
    max_concurrency: int = 8,
    retry: RetryPolicy | None = None,
    budget: FailureBudget | None = None,
    quiet: bool = True,
    fsync_interval_s: float | None = 0.2,
    fsync: bool | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    pricing: Pricing | None = None,
    max_cost: float | None = None,
    extend_summary: Callable[[JudgedSummary], RunSummary] | None = None,
    retry_failed: bool = False,
    adaptive: bool = True,
) -> RunResult:
    """Run (or resume) ``tasks`` into the run directory ``out``.

    Parameters
    ----------
    out
        The run directory (created if needed).
    tasks
        The plan (see :func:`plan_tasks`).
    command, arguments, inputs, data_fingerprint, seed
        Recorded in ``manifest.json``; ``command``, the judges, the fingerprint and the models
        must match a directory being resumed.
    executor
        Where tasks run; default a :class:`ThreadExecutor` of ``max_concurrency`` threads.
    retry, budget
        Retry policy for retryable LM failures, and the failure budget.
    quiet
        No progress bar.
    fsync_interval_s
        Group commit of ``judgments.jsonl``: every record is written and flushed at once
        (a killed process loses nothing); ``fsync`` runs at most this often and at the end
        (0: every record, ``None``: never).
    fsync
        Older switch kept for callers: ``False`` means ``fsync_interval_s=None`` (flush only),
        ``True`` keeps ``fsync_interval_s``.
    B, level
        Bootstrap replicates and confidence level of the summary's intervals and rank sets.
    pricing
        How judgments are priced (default: LiteLLM's price table).
    max_cost
        Stop (exit 3) once the run directory's judgments cost this many US dollars: no new
        request starts after that. Needs a price for every judge model.
    extend_summary
        A study's analysis: given the runner's summary of a finished invocation, returns the
        study's summary (its ``kind`` and block added), which is what ``summary.json`` holds
        (written once, by :func:`attune_judge.runs.write_summary`).
    retry_failed
        Judge again only the failed judgments (``lm_error``, ``parse_error``) of the existing
        run directory ``out`` (module docstring); its counts are printed to stderr unless
        ``quiet`` and returned in :attr:`RunResult.retried`.
    adaptive
        Adapt the work in flight to rate limits (HTTP 429, ``Retry-After``) up to the
        executor's ``max_concurrency`` (:class:`ConcurrencyLimit`; ``False``: fixed). How
        often it backed off is in ``summary.json``'s ``run`` block and, when it did, on stderr.

    Returns
    -------
    RunResult
        ``stopped`` is set when the failure budget stopped the run (the summary then covers the
        judgments made so far).
    """
    start = time.perf_counter()
    if fsync is False:
        fsync_interval_s = None
    pricing = pricing if pricing is not None else Pricing()
    if max_cost is not None:
        check_prices(tasks, pricing)
    judgments = Path(out) / "judgments.jsonl"
    if retry_failed and not (judgments.exists() and judgments.stat().st_size > 0):
        raise UserError(
            f"{judgments}: no judgments to retry: --retry-failed re-judges the failed "
            "judgments of an existing run directory (run the command without it first)"
        )
    run_dir = RunDir(out)
    with run_dir.lock():
        return _run_locked(
            run_dir,
            tasks,
            start=start,
            command=command,
            arguments=arguments,
            inputs=inputs,
            data_fingerprint=data_fingerprint,
            seed=seed,
            executor=executor or ThreadExecutor(max_concurrency),
            retry=retry or RetryPolicy(seed=seed),
            budget=budget or FailureBudget(),
            quiet=quiet,
            fsync_interval_s=fsync_interval_s,
            B=B,
            level=level,
            pricing=pricing,
            max_cost=max_cost,
            extend_summary=extend_summary,
            retry_failed=retry_failed,
            adaptive=adaptive,
        )


def _run_locked(
    run_dir: RunDir,
    tasks: Sequence[Task],
    *,
    start: float,
    command: str,
    arguments: Mapping[str, Any],
    inputs: Mapping[str, str],
    data_fingerprint: str,
    seed: int,
    executor: Executor,
    retry: RetryPolicy,
    budget: FailureBudget,
    quiet: bool,
    fsync_interval_s: float | None,
    B: int,
    level: float,
    pricing: Pricing,
    max_cost: float | None,
    extend_summary: Callable[[JudgedSummary], RunSummary] | None,
    retry_failed: bool = False,
    adaptive: bool = True,
) -> RunResult:
    judges = {t.judge.judge_id: JudgeSpec.of(t.judge.spec) for t in tasks}
    manifest = run_dir.open_manifest(
        RunManifest(
            command=command,
            arguments=dict(arguments),
            versions=versions(),
            judges=judges,
            rubric_hashes={jid: spec.rubric_hash() for jid, spec in judges.items()},
            data_fingerprint=data_fingerprint,
            inputs=dict(inputs),
            models=sorted({t.item.candidate_model for t in tasks}),
            seed=seed,
            n_tasks=len(tasks),
        )
    )
    previous_wall = _previous_wall_time(run_dir)
    torn = run_dir.repair_torn_tail() is not None
    effective = effective_judgments(run_dir.read_judgments())
    retried: Counter[str] = Counter()
    if retry_failed:
        pending = _failed_tasks(tasks, effective, retried, quiet=quiet)
    else:
        finished = {k for k, j in effective.items() if j.status in FINISHED_STATUSES}
        pending = pending_tasks(tasks, finished)
    n_skipped = len(tasks) - len(pending)
    counts: Counter[str] = Counter()
    limit = ConcurrencyLimit(getattr(executor, "max_concurrency", 1), adaptive)
    stopped: str | None = None
    failed = True  # until the invocation ends normally
    interrupted = False
    try:
        already = spent_usd(effective.values())
        if pending and max_cost is not None and already >= max_cost:
            stopped = cost_message(already, max_cost)
        elif pending:
            stopped = _execute(
                run_dir,
                pending,
                executor=executor,
                retry=retry,
                budget=budget,
                quiet=quiet,
                fsync_interval_s=fsync_interval_s,
                effective=effective,
                counts=counts,
                pricing=pricing,
                max_cost=max_cost,
                limit=limit,
            )
        failed = False
        if limit.rate_limited and not quiet:
            print(f"rate limits: {_limit_line(limit)}", file=sys.stderr)
        if retry_failed and not quiet:
            print(f"retry-failed: {_retried_outcome(pending, effective)}", file=sys.stderr)
    except (KeyboardInterrupt, Interrupted):
        interrupted = True
        raise
    finally:
        if interrupted:
            # Ctrl-C stops at once: no summary now (its bootstrap takes seconds); the next run
            # of the same command writes it. This re-raises the interrupt under way.
            raise
        if stopped is None and tasks and not _any_ok(tasks, effective):
            stopped = (
                f"no judgment is ok ({_status_counts(tasks, effective)}): nothing was scored; "
                "look at the errors and raw_output in judgments.jsonl, fix the cause and run "
                "the same command again"
            )
        wall = time.perf_counter() - start
        summary: RunSummary = summarize(
            tasks,
            effective,
            seed=seed,
            B=B,
            level=level,
            run_info={
                "wall_time_s": wall,
                "wall_time_total_s": previous_wall + wall,
                "n_skipped": n_skipped,
                "n_run": sum(counts.values()),
                "stopped": stopped,
                "invocations": manifest.invocations - (1 if failed else 0),
                "adaptive": adaptive,
                "n_rate_limited": limit.rate_limited,
                "n_backoffs": limit.backoffs,
                "max_in_flight": limit.peak_in_flight,
            },
        )
        try:
            if extend_summary is not None and not failed:
                assert isinstance(summary, JudgedSummary)
                try:
                    summary = extend_summary(summary)
                except BaseException:
                    write_summary(run_dir.path, summary)  # the judgments' summary is kept
                    raise
            summary = write_summary(run_dir.path, summary)
            if not failed:
                run_dir.commit_manifest(manifest)
        except UserError as exc:
            if not failed:
                raise
            # the invocation is already failing: report that first cause, not this one
            log.error("%s", exc)
    return RunResult(
        run_dir=run_dir.path,
        n_tasks=len(tasks),
        n_skipped=n_skipped,
        n_run=sum(counts.values()),
        n_by_status=dict(counts),
        stopped=stopped,
        torn_line_dropped=torn,
        wall_time_s=time.perf_counter() - start,
        summary=summary,
        retried=dict(retried),
    )


def _limit_line(limit: ConcurrencyLimit) -> str:
    """What the rate limits did to the run, in one line."""
    line = f"{limit.rate_limited} rate-limited answers (HTTP 429 / Retry-After)"
    if not limit.adaptive:
        return line + f"; concurrency fixed at {limit.maximum} (--no-adaptive)"
    return line + (
        f"; backed off {limit.backoffs} times, at most {limit.peak_in_flight} of "
        f"--max-concurrency {limit.maximum} in flight, ending at {limit.window()}"
    )


RETRIED_STATUSES = ("lm_error", "parse_error")
"""What ``--retry-failed`` judges again (``refused`` asks no model: the same item is refused
again)."""


def _failed_tasks(
    tasks: Sequence[Task],
    effective: Mapping[TaskKey, Judgment],
    retried: Counter[str],
    *,
    quiet: bool,
) -> list[Task]:
    """The tasks ``--retry-failed`` judges again; their old statuses counted into ``retried``."""
    pending = []
    kept: Counter[str] = Counter()
    for task in tasks:
        j = effective.get(task.key)
        if j is None:
            kept["missing"] += 1
        elif j.status in RETRIED_STATUSES:
            retried[j.status] += 1
            pending.append(task)
        elif j.status != "ok":
            kept[j.status] += 1
    if not quiet:
        what = ", ".join(f"{n} {s}" for s, n in sorted(retried.items())) or "none"
        line = f"retry-failed: judging {len(pending)} failed judgments again ({what})"
        if kept:
            line += "; not retried: " + ", ".join(f"{n} {s}" for s, n in sorted(kept.items()))
        print(line, file=sys.stderr)
    return pending


def _retried_outcome(pending: Sequence[Task], effective: Mapping[TaskKey, Judgment]) -> str:
    """``N ok, M still failed (...)`` of the tasks judged again."""
    now: Counter[str] = Counter()
    for task in pending:
        j = effective.get(task.key)
        now[j.status if j is not None else "not judged"] += 1
    ok = now.pop("ok", 0)
    rest = ", ".join(f"{n} {s}" for s, n in sorted(now.items()))
    return f"{ok} of {len(pending)} now ok" + (f"; still failed: {rest}" if rest else "")


def _any_ok(tasks: Sequence[Task], effective: Mapping[TaskKey, Judgment]) -> bool:
    for task in tasks:
        j = effective.get(task.key)
        if j is not None and j.status == "ok":
            return True
    return False


def _status_counts(tasks: Sequence[Task], effective: Mapping[TaskKey, Judgment]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for task in tasks:
        j = effective.get(task.key)
        counts[j.status if j is not None else "missing"] += 1
    return dict(counts)


def _previous_wall_time(run_dir: RunDir) -> float:
    """Wall time of earlier invocations, from the summary they left (0 for a new run)."""
    try:
        summary = read_summary(run_dir.path)
    except UserError:
        return 0.0
    run = getattr(summary, "run", None)
    return float(getattr(run, "wall_time_total_s", None) or 0.0)
