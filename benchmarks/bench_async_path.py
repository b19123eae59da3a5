"""DSPy's async path against threads over HTTP (issue 28, item 3): is an async executor worth it?

Both sides judge the same kind of items with the same judge (the reference-graded judge,
``--lm openai/fake --api-base URL --response-format json_object``, DSPy's disk cache in a fresh
directory, fresh items for every run so that no answer comes from the cache) against
:class:`attune_judge.testing.FaultServer` in its own process (loopback, keep-alive, 50 ms per
request):

* ``thread``: ``Judge.judge`` on a ``ThreadPoolExecutor`` of ``--concurrency`` threads (what the
  runner's thread executor does per task);
* ``async``: ``Judge.ajudge`` (DSPy's ``acall`` and its async HTTP engine) on one event loop,
  ``--concurrency`` in flight at once (an ``asyncio.Semaphore``).

Neither side has the runner's retries, log writer or summary around it, so the figures compare
the two paths themselves. Runs alternate ``--repeat`` times per concurrency; printed per run:
wall, wall over the ideal ``n × latency / concurrency``, and CPU per judgment of this process
(the client only); then the medians per mode and the ratio async / thread.

    .venv/bin/python benchmarks/bench_async_path.py [--n 1000] [--concurrency 32 128] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from attune_judge.lm import LMSettings

sys.path.insert(0, str(Path(__file__).parent))


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _run(mode: str, judge: Any, items: list[Any], concurrency: int) -> list[Any]:
    if mode == "thread":
        with ThreadPoolExecutor(concurrency) as pool:
            return list(pool.map(judge.judge, items))

    async def go() -> list[Any]:
        gate = asyncio.Semaphore(concurrency)

        async def one(item: Any) -> Any:
            async with gate:
                return await judge.ajudge(item)

        return list(await asyncio.gather(*(one(item) for item in items)))

    return asyncio.run(go())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--tiny", action="store_true", help="24 judgments at concurrency 4, once (the suite)"
    )
    args = ap.parse_args()
    if args.tiny:
        args.n, args.concurrency, args.repeat, args.latency = 24, [4], 1, 0.01
    tmp = Path(tempfile.mkdtemp(prefix="bench-async-path-"))
    os.environ["ATTUNE_CACHE_DIR"] = str(tmp / "cache")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import bench_fault_server as fault

    from attune_judge.data import JudgeItem, read_jsonl
    from attune_judge.runner import ScoreConfig
    from attune_judge.runner._score import build_score_judge

    parent, child = mp.Pipe()
    server = mp.get_context("spawn").Process(
        target=fault._serve, args=(child, args.latency, {}, 0), daemon=True
    )
    server.start()
    url = parent.recv()
    runs: list[dict[str, Any]] = []
    try:
        for concurrency in args.concurrency:
            for r in range(args.repeat):
                for mode in ("thread", "async"):
                    tag = f"{mode}-{concurrency}-{r} "  # fresh prompts: no cache hits
                    path = tmp / f"{tag.strip()}.jsonl"
                    fault._items(path, args.n + 1, tag=tag)
                    items = list(read_jsonl(path, JudgeItem))
                    config = ScoreConfig(
                        data=path,
                        out=tmp / tag.strip(),
                        lm="openai/fake",
                        max_concurrency=concurrency,
                        lm_settings=LMSettings(api_base=url, response_format="json_object"),
                    )
                    judge = build_score_judge(config)
                    _run(mode, judge, items[:1], 1)  # warm-up: clients, lazy imports
                    cpu, start = _cpu(), time.perf_counter()
                    out = _run(mode, judge, items[1:], concurrency)
                    wall, cpu = time.perf_counter() - start, _cpu() - cpu
                    ideal = args.n * args.latency / concurrency
                    runs.append(
                        {
                            "mode": mode,
                            "concurrency": concurrency,
                            "ok": sum(j.status == "ok" for j in out),
                            "failed": dict(
                                Counter(
                                    f"{j.status}: {str(j.error)[:120]}"
                                    for j in out
                                    if j.status != "ok"
                                )
                            ),
                            "wall_s": round(wall, 3),
                            "ratio_to_ideal": round(wall / ideal, 2),
                            "cpu_ms_per_judgment": round(1000 * cpu / args.n, 2),
                            "loadavg_1min": round(os.getloadavg()[0], 2),
                        }
                    )
                    print(json.dumps(runs[-1]), flush=True)
    finally:
        parent.send("stop")
        parent.recv()
    for concurrency in args.concurrency:
        med = {
            mode: {
                key: round(
                    statistics.median(
                        x[key]
                        for x in runs
                        if x["mode"] == mode and x["concurrency"] == concurrency
                    ),
                    2,
                )
                for key in ("ratio_to_ideal", "cpu_ms_per_judgment")
            }
            for mode in ("thread", "async")
        }
        print(
            f"concurrency {concurrency}: median ratio to ideal thread "
            f"{med['thread']['ratio_to_ideal']}, async {med['async']['ratio_to_ideal']}; "
            f"CPU per judgment thread {med['thread']['cpu_ms_per_judgment']} ms, async "
            f"{med['async']['cpu_ms_per_judgment']} ms; async / thread CPU "
            f"{med['async']['cpu_ms_per_judgment'] / med['thread']['cpu_ms_per_judgment']:.2f}"
        )


if __name__ == "__main__":
    main()
