"""Runner benchmark: 2,000 judgments through the real DSPy path, 50 ms engine, concurrency 32.

Run ``.venv/bin/python benchmarks/bench_runner.py`` (options: ``--n``, ``--latency``,
``--concurrency``, ``--executor thread|process|both``, ``--workers``, ``--no-cache``,
``--fsync-interval``, ``--profile``). For each executor (both by default, one after the other,
each with its own run directory and DSPy cache) it reports

1. the wall time of ``run_score`` on a fresh run directory as a ratio to the ideal
   ``n * latency / concurrency`` (target <= 1.25); for the process executor also the workers'
   start-up (started before the timed run) and the ratio including it,
2. the same command again on the finished directory (target: zero engine calls, seconds),
3. peak resident memory (``resource.getrusage``; the workers' separately), CPU of the parent
   and of the workers, the machine's cores and load average.

The judge is the real reference-graded judge (``attunebench-reference`` rubric, DSPy
Signature + JSON adapter) on a :class:`attune_judge.testing.ScriptedEngine` with a fixed
latency, DSPy's disk cache on (in a temporary ``ATTUNE_CACHE_DIR``) unless ``--no-cache``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
_CAND = re.compile(r"CAND-(\d+)-END")


def _answer(messages: list[dict[str, str]]) -> str:
    n = int(_CAND.findall(messages[-1]["content"])[0])
    return json.dumps({**dict.fromkeys(CRITERIA, 1 + n % 7), "rationale": "scripted"})


def _items(path: Path, n: int) -> None:
    from attune_judge.data import ChatMessage, JudgeItem, write_jsonl

    turns = 5
    items = []
    for k in range(n):
        conv, rest = divmod(k, 2 * turns)
        model, turn = divmod(rest, turns)
        items.append(
            JudgeItem(
                item_id=f"c{conv}:{turn + 1}:m{model}",
                conversation_id=f"c{conv}",
                turn=turn + 1,
                context=[
                    ChatMessage(role="user", content=f"I had a rough week at work ({conv})."),
                    ChatMessage(role="assistant", content="That sounds hard. What happened?"),
                    ChatMessage(role="user", content=f"My manager criticised me again ({turn})."),
                ],
                candidate=f"CAND-{k}-END I'm sorry you're dealing with that.",
                candidate_model=f"m{model}",
                reference="That sounds exhausting. Do you want to talk it through?",
            )
        )
    write_jsonl(path, items)


def bench_judge(latency_s: float, cache: bool) -> object:
    """The benchmark's judge (module level: the process executor's workers build it too).

    DSPy's cache goes to ``ATTUNE_CACHE_DIR``, which a worker inherits from the parent.
    """
    from attune_judge.judges import ReferenceJudge
    from attune_judge.lm import configure_cache
    from attune_judge.rubrics import load_rubric
    from attune_judge.testing import ScriptedEngine

    configure_cache(os.environ["ATTUNE_CACHE_DIR"], enabled=cache)
    engine = ScriptedEngine(_answer, latency_s=latency_s)
    judge = ReferenceJudge(load_rubric("attunebench-reference"), engine.lm(cache=cache))
    judge.engine = engine  # type: ignore[attr-defined]  (to count calls in this process)
    return judge


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    ru = resource.getrusage(who)
    return ru.ru_utime + ru.ru_stime


def _score(items: Path, out: Path, args: argparse.Namespace, executor: object) -> tuple:
    """One ``run_score``: (wall s, parent CPU s, engine calls in this process, result)."""
    from attune_judge.runner import ScoreConfig, run_score

    judge = bench_judge(args.latency, not args.no_cache)
    config = ScoreConfig(
        data=items,
        out=out,
        lm="scripted/judge",
        max_concurrency=args.concurrency,
        quiet=True,
        fsync_interval_s=args.fsync_interval,
    )
    start, cpu0 = time.perf_counter(), _cpu()
    result = run_score(config, judges=[judge], executor=executor)  # type: ignore[list-item, arg-type]
    return time.perf_counter() - start, _cpu() - cpu0, judge.engine.calls, result  # type: ignore[attr-defined]


def _bench(kind: str, tmp: Path, args: argparse.Namespace, profiler: object) -> dict[str, object]:
    """Fresh run + rerun with one executor, in its own run directory and DSPy cache."""
    from attune_judge.runner import JudgeFactory, ProcessExecutor, ThreadExecutor

    # a separate cache per executor: the second must not find the first one's answers
    os.environ["ATTUNE_CACHE_DIR"] = str(tmp / f"cache-{kind}")
    ideal = args.n * args.latency / args.concurrency
    load_before = os.getloadavg()[0]
    fig: dict[str, object] = {"executor": kind}
    if kind == "process":
        executor: object = ProcessExecutor(
            JudgeFactory(bench_judge, (args.latency, not args.no_cache)),
            workers=args.workers,
            max_concurrency=args.concurrency,
        )
        fig["workers"] = args.workers
        t0 = time.perf_counter()
        executor.start()  # type: ignore[attr-defined]
        fig["worker_start_s"] = round(time.perf_counter() - t0, 3)
    else:
        executor = ThreadExecutor(args.concurrency)
    if profiler:
        profiler.enable()  # type: ignore[attr-defined]
    wall1, cpu1, calls1, res1 = _score(tmp / "items.jsonl", tmp / f"run-{kind}", args, executor)
    if profiler:
        profiler.disable()  # type: ignore[attr-defined]
    wall2, cpu2, calls2, res2 = _score(tmp / "items.jsonl", tmp / f"run-{kind}", args, executor)
    children_cpu0 = _cpu(resource.RUSAGE_CHILDREN)
    if kind == "process":
        executor.close()  # type: ignore[attr-defined]
        # the workers' CPU (start-up included) is known once they have been reaped
        fig["workers_cpu_s"] = round(_cpu(resource.RUSAGE_CHILDREN) - children_cpu0, 3)
        fig["worker_peak_rss_mb"] = round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
        )
    fig.update(
        {
            "loadavg_1min_before": round(load_before, 2),
            "first_run_s": round(wall1, 3),
            "ratio_to_ideal": round(wall1 / ideal, 3) if ideal else None,
            "parent_cpu_s": round(cpu1, 3),
            "parent_cpu_ms_per_judgment": round(1000 * cpu1 / args.n, 3),
            "first_run_n_run": res1.n_run,
            "first_run_n_by_status": res1.n_by_status,
            "rerun_s": round(wall2, 3),
            "rerun_cpu_s": round(cpu2, 3),
            "rerun_n_run": res2.n_run,
        }
    )
    if kind == "process":
        start = float(fig["worker_start_s"])  # type: ignore[arg-type]
        fig["ratio_incl_worker_start"] = round((wall1 + start) / ideal, 3) if ideal else None
        fig["engine_calls"] = "in the workers (not counted); first_run_n_run judgments made"
        fig["rerun_engine_calls"] = calls2  # the rerun starts no task at all
    else:
        fig["engine_calls"] = calls1
        fig["rerun_engine_calls"] = calls2
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--executor", choices=("thread", "process", "both"), default="both", help="default both"
    )
    parser.add_argument("--workers", type=int, default=2, help="process executor's workers")
    parser.add_argument("--no-cache", action="store_true", help="DSPy request cache off")
    parser.add_argument(
        "--fsync-interval",
        type=float,
        default=0.2,
        help="group-commit interval in s (0: fsync every record, the slow extreme)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the first run(s)")
    parser.add_argument(
        "--tiny", action="store_true", help="24 judgments, thread executor, 10 ms (the suite)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.n, args.latency, args.concurrency, args.executor = 24, 0.01, 4, "thread"

    tmp = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    os.environ["ATTUNE_CACHE_DIR"] = str(tmp / "cache")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import dspy  # noqa: F401  (import cost outside the timed region)

    _items(tmp / "items.jsonl", args.n)
    import attune_judge.judges
    import attune_judge.runner
    import attune_judge.testing  # noqa: F401

    rss_imports_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ideal = args.n * args.latency / args.concurrency
    kinds = ("thread", "process") if args.executor == "both" else (args.executor,)
    profiler = cProfile.Profile() if args.profile else None
    runs = [_bench(kind, tmp, args, profiler) for kind in kinds]
    figures = {
        "n": args.n,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "cache": not args.no_cache,
        "fsync_interval_s": args.fsync_interval,
        "cores": os.cpu_count(),
        "ideal_s": round(ideal, 3),
        "runs": runs,
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
        "parent_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_after_imports_mb": round(rss_imports_mb, 1),
    }
    print(json.dumps(figures, indent=2))
    if profiler:
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(25)
        print(stream.getvalue(), file=sys.stderr)


if __name__ == "__main__":
    main()
