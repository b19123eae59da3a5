"""The embedded judge before and after issue 28, same items, same run.

For each shipped validation set (or ``--sets``), ``--n`` of its items are judged by the judge
``validate --lm local`` builds (expected scores, one call per criterion), on the thread
executor at ``--concurrency`` (``validate``'s default 8: calls of several judgments take turns
on the model), twice: by the path before issue 28 (``_local_logprobs`` as of ``--baseline``,
read from git: only the context is reused, a full sort of the vocabulary per token, one
evaluation too many per answer) and by the current one (saved prompt states). The two
alternate ``--repeat`` times per set; printed per set: seconds per judgment of each (median
over repeats), the speed-up, the prompt tokens evaluated per judgment, and the largest
difference between the two runs' scores (they must agree to 1e-6). ``--concurrency 1`` gives
the sequential case, where the context alone already holds the previous criterion's prefix;
``--executor async`` judges with ``ajudge`` on one event loop instead of threads.

    python benchmarks/bench_embedded_prefix.py [--n 6] [--repeat 2] [--sets NAME,...]

The judge is built as ``validate`` builds it, with DSPy's request cache off.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
import types
from pathlib import Path
from typing import Any

BASELINE = "d1417d7"
"""The last commit before issue 28."""


def _baseline(rev: str) -> Any:
    """``complete_with_logprobs`` of ``_local_logprobs.py`` at git revision ``rev``."""
    root = Path(__file__).resolve().parents[1]
    src = subprocess.run(
        ["git", "show", f"{rev}:src/attune_judge/lm/_local_logprobs.py"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("baseline_local_logprobs")
    exec(compile(src, f"{rev}:_local_logprobs.py", "exec"), module.__dict__)

    def complete(*args: Any, states: Any = None, **kwargs: Any) -> Any:
        return module.complete_with_logprobs(*args, **kwargs)

    return complete


def _judge_all(
    judge: Any, items: list[Any], concurrency: int, executor: str
) -> tuple[float, dict[str, Any]]:
    """Judge ``items`` with ``concurrency`` in flight: threads, or one event loop (``ajudge``)."""
    import asyncio

    from attune_judge.runner import ThreadExecutor

    async def run_async() -> list[Any]:
        gate = asyncio.Semaphore(concurrency)

        async def one(item: Any) -> Any:
            async with gate:
                return await judge.ajudge(item)

        return list(await asyncio.gather(*(one(i) for i in items)))

    t0 = time.perf_counter()
    if executor == "async":
        done = asyncio.run(run_async())
    else:
        done = list(ThreadExecutor(concurrency).map_unordered(judge.judge, items))
    return time.perf_counter() - t0, {j.item_id: j for j in done}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6, help="items per set")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--sets", default="", help="comma-separated (default: every shipped set)")
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the old path")
    parser.add_argument("--executor", choices=["thread", "async"], default="thread")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="1 item of one set, once, 1 thread, no warm-up (the suite)",
    )
    args = parser.parse_args()
    if args.tiny:
        args.n, args.repeat, args.concurrency = 1, 1, 1
        args.sets = args.sets or "empathic-communication-empatheticdialogues"
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from dataclasses import replace

    from attune_judge.judges import build_judge
    from attune_judge.lm import LMSettings, _local, _local_logprobs
    from attune_judge.lm._local_logprobs import PrefixStates
    from attune_judge.runner import judge_mode_options
    from attune_judge.validate import VALIDATION_SETS, load_calibration_set
    from attune_judge.validate._judge import _items

    current = _local_logprobs.complete_with_logprobs
    old = _baseline(args.baseline)

    names = [s for s in args.sets.split(",") if s] or list(VALIDATION_SETS)
    figures: dict[str, Any] = {
        "concurrency": args.concurrency,
        "executor": args.executor,
        "n": args.n,
        "cores": os.cpu_count(),
        "loadavg_1min_start": os.getloadavg()[0],
    }
    for name in names:
        spec = VALIDATION_SETS[name]
        humans = {r.item_id for r in load_calibration_set(spec.calibration) if spec.humans(r)}
        items = _items(spec, humans, args.n)
        judge = build_judge(
            spec.rubric,
            LMSettings(seed=0, cache=False),
            replace(judge_mode_options(spec.rubric, None, False), use_reference=False),
        )
        if getattr(judge, "score_mode", None) != "expected":
            figures[name] = "not a per-criterion expected-score judge: skipped"
            continue
        engine = _local.LocalEngine()  # the judge's model and context size (the defaults)
        if args.tiny:  # the model loaded, no warm-up judgment
            _local._load(engine.model_path, engine.n_ctx)
        else:
            judge.judge(items[0])  # model loaded, imports done
        key = (str(engine.model_path), engine.n_ctx)
        llama = _local._MODELS[key][0]
        evaluated = [0]
        real_eval = llama.eval

        def counting_eval(tokens: Any, real: Any = real_eval, count: list[int] = evaluated) -> None:
            count[0] += len(tokens)
            real(tokens)

        llama.eval = counting_eval
        walls: dict[str, list[float]] = {"old": [], "new": []}
        tokens: dict[str, int] = {}
        scores: dict[str, dict[str, Any]] = {}
        try:
            for _ in range(args.repeat):
                for mode in ("old", "new"):
                    _local._STATES.pop(key, None)
                    _local_logprobs.complete_with_logprobs = old  # type: ignore[assignment]
                    if mode == "new":
                        _local._STATES[key] = PrefixStates(512 << 20)
                        _local_logprobs.complete_with_logprobs = current
                    llama.n_tokens = 0
                    evaluated[0] = 0
                    wall, out = _judge_all(judge, items, args.concurrency, args.executor)
                    walls[mode].append(wall / len(items))
                    tokens[mode] = evaluated[0] // len(items)
                    scores[mode] = out
        finally:
            del llama.eval
            _local._STATES[key] = PrefixStates(512 << 20)
            _local_logprobs.complete_with_logprobs = current
        diff = 0.0
        for iid, before in scores["old"].items():
            after = scores["new"][iid]
            assert before.status == after.status, (iid, before.error, after.error)
            for crit, value in before.scores.items():
                diff = max(diff, abs(value - after.scores[crit]))
        b, s = statistics.median(walls["old"]), statistics.median(walls["new"])
        figures[name] = {
            "items": len(items),
            "s_per_judgment_old": round(b, 3),
            "s_per_judgment_new": round(s, 3),
            "speedup": round(b / s, 2),
            "prompt_tokens_evaluated_per_judgment": tokens,
            "max_abs_score_difference": diff,
            "loadavg_1min": os.getloadavg()[0],
        }
        print(name, json.dumps(figures[name]), flush=True)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
