"""Runner benchmark: 2,000 judgments through the real DSPy path, 50 ms engine, concurrency 32.

Run ``.venv/bin/python benchmarks/bench_runner.py`` (options: ``--n``, ``--latency``,
``--concurrency``, ``--no-cache``, ``--fsync-interval``, ``--profile``). It reports

1. the wall time of ``run_score`` on a fresh run directory as a ratio to the ideal
   ``n * latency / concurrency`` (target <= 1.25),
2. the same command again on the finished directory (target: zero engine calls, seconds),
3. peak resident memory (``resource.getrusage``), the machine's cores and load average.

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


def _run(items: Path, out: Path, args: argparse.Namespace) -> tuple[float, int, object]:
    from attune_judge.judges import ReferenceJudge
    from attune_judge.rubrics import load_rubric
    from attune_judge.runner import ScoreConfig, run_score
    from attune_judge.testing import ScriptedEngine

    engine = ScriptedEngine(_answer, latency_s=args.latency)
    judge = ReferenceJudge(load_rubric("attunebench-reference"), engine.lm(cache=not args.no_cache))
    config = ScoreConfig(
        data=items,
        out=out,
        lm="scripted/judge",
        max_concurrency=args.concurrency,
        quiet=True,
        fsync_interval_s=args.fsync_interval,
    )
    start = time.perf_counter()
    cpu0 = _cpu()
    result = run_score(config, judges=[judge])
    _LAST_CPU[0] = _cpu() - cpu0
    return time.perf_counter() - start, engine.calls, result


_LAST_CPU = [0.0]


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--no-cache", action="store_true", help="DSPy request cache off")
    parser.add_argument(
        "--fsync-interval",
        type=float,
        default=0.2,
        help="group-commit interval in s (0: fsync every record, the slow extreme)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the first run")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    os.environ["ATTUNE_CACHE_DIR"] = str(tmp / "cache")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import dspy  # noqa: F401  (import cost outside the timed region)

    from attune_judge.lm import configure_cache

    configure_cache(tmp / "cache", enabled=not args.no_cache)
    _items(tmp / "items.jsonl", args.n)
    import attune_judge.judges
    import attune_judge.runner
    import attune_judge.testing  # noqa: F401

    rss_imports_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ideal = args.n * args.latency / args.concurrency
    load_before = os.getloadavg()

    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    wall1, calls1, res1 = _run(tmp / "items.jsonl", tmp / "run", args)
    if profiler:
        profiler.disable()
    cpu1 = _LAST_CPU[0]
    wall2, calls2, res2 = _run(tmp / "items.jsonl", tmp / "run", args)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    summary = res1.summary  # type: ignore[attr-defined]
    figures = {
        "n": args.n,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "cache": not args.no_cache,
        "fsync_interval_s": args.fsync_interval,
        "cores": os.cpu_count(),
        "loadavg_1min_before": round(load_before[0], 2),
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
        "ideal_s": round(ideal, 3),
        "first_run_s": round(wall1, 3),
        "ratio_to_ideal": round(wall1 / ideal, 3) if ideal else None,
        "first_run_cpu_s": round(cpu1, 3),
        "first_run_cpu_ms_per_judgment": round(1000 * cpu1 / args.n, 3),
        "first_run_engine_calls": calls1,
        "first_run_n_by_status": summary["run"]["n_by_status"],
        "rerun_s": round(wall2, 3),
        "rerun_cpu_s": round(_LAST_CPU[0], 3),
        "rerun_engine_calls": calls2,
        "rerun_n_run": res2.n_run,  # type: ignore[attr-defined]
        "peak_rss_mb": round(peak_mb, 1),
        "rss_after_imports_mb": round(rss_imports_mb, 1),
    }
    print(json.dumps(figures, indent=2))
    if profiler:
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(25)
        print(stream.getvalue(), file=sys.stderr)


if __name__ == "__main__":
    main()
