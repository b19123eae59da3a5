"""Adaptive concurrency against a provider's rate limit (issue 47): fixed vs adaptive.

Run ``.venv/bin/python benchmarks/bench_rate_limit.py`` (options ``--n``, ``--rate``,
``--burst``, ``--retry-after``, ``--latency``, ``--concurrency``, ``--repeat``). The fault server
runs in its own process with a token bucket of ``--rate`` requests/s (``--burst`` tokens); a
request that finds it empty gets HTTP 429 with ``Retry-After: --retry-after``. ``run_score``
judges ``--n`` distinct items at ``--max-concurrency`` ``--concurrency`` through the real path
(reference judge, ``openai/fake``, ``json_object``, no request cache), once with
``adaptive=False`` (fixed concurrency) and once adaptive (the default), alternating
``--repeat`` times. It prints one JSON object per run and the medians: the 429s the server
sent, the run's own counts (``n_rate_limited``, ``n_backoffs``, ``max_in_flight``), the wall
time and ``wall_over_ideal`` = wall ÷ ideal, where ideal = (n − burst) ÷ rate, the time the
rate limit itself needs; and ``adaptive_429_over_fixed``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from attune_judge.lm import LMSettings


def _serve(conn: Any, args: argparse.Namespace) -> None:
    from attune_judge.testing import FaultServer

    limit = (args.rate, args.burst)
    with FaultServer(
        latency_s=args.latency, retry_after_s=args.retry_after, rate_limit=limit, keep_alive=True
    ) as server:
        conn.send(server.url)
        while conn.recv() == "count":
            conn.send({"requests": server.requests, "429": server.count("rate_limit")})


def _run(tmp: Path, url: str, args: argparse.Namespace, adaptive: bool, k: int) -> dict[str, Any]:
    from attune_judge.judges import build_judge
    from attune_judge.lm import resolve_lm
    from attune_judge.runner import ScoreConfig, run_score

    lm = resolve_lm(
        LMSettings(lm="openai/fake", api_base=url, response_format="json_object", cache=False)
    )
    config = ScoreConfig(
        data=tmp / "items.jsonl",
        out=tmp / f"run-{k}-{adaptive}",
        lm="openai/fake",
        max_concurrency=args.concurrency,
        adaptive=adaptive,
        max_retries=100,
        max_failure_rate=1.0,
        quiet=True,
        B=200,
        lm_settings=LMSettings(api_base=url),
    )
    start = time.perf_counter()
    result = run_score(config, judges=[build_judge("attunebench-reference", lm)])
    wall = time.perf_counter() - start
    run = result.summary.run  # type: ignore[attr-defined]
    return {
        "adaptive": adaptive,
        "wall_s": round(wall, 2),
        "ok": run.n_by_status.get("ok", 0),
        "n_rate_limited": run.n_rate_limited,
        "n_backoffs": run.n_backoffs,
        "max_in_flight": run.max_in_flight,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--burst", type=float, default=20.0)
    parser.add_argument("--retry-after", type=float, default=1.0)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--tiny", action="store_true", help="30 items at 200/s, burst 10, once (the suite)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.n, args.rate, args.burst, args.retry_after, args.latency = 30, 200.0, 10.0, 0.05, 0.01
        args.concurrency, args.repeat = 8, 1
    tmp = Path(tempfile.mkdtemp(prefix="bench-rate-"))
    os.environ.setdefault("ATTUNE_CACHE_DIR", str(tmp / "cache"))
    from bench_fault_server import _items  # the same distinct items as that benchmark

    _items(tmp / "items.jsonl", args.n)
    ideal = (args.n - args.burst) / args.rate
    rows: list[dict[str, Any]] = []
    for k in range(args.repeat):
        for adaptive in (False, True):
            parent, child = mp.Pipe()
            server = mp.get_context("spawn").Process(target=_serve, args=(child, args))
            server.start()
            url = parent.recv()
            row = _run(tmp, url, args, adaptive, k)
            parent.send("count")
            row.update(parent.recv())
            parent.send("stop")
            server.join(10)
            row["wall_over_ideal"] = round(row["wall_s"] / ideal, 3)
            row["load"] = round(os.getloadavg()[0], 2)
            print(json.dumps(row), flush=True)
            rows.append(row)

    def med(adaptive: bool, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["adaptive"] is adaptive)

    print(
        json.dumps(
            {
                "n": args.n,
                "rate": args.rate,
                "burst": args.burst,
                "concurrency": args.concurrency,
                "ideal_s": round(ideal, 2),
                "fixed_429": med(False, "429"),
                "adaptive_429": med(True, "429"),
                "adaptive_429_over_fixed": round(med(True, "429") / max(1, med(False, "429")), 3),
                "fixed_wall_over_ideal": round(med(False, "wall_over_ideal"), 3),
                "adaptive_wall_over_ideal": round(med(True, "wall_over_ideal"), 3),
            }
        )
    )


if __name__ == "__main__":
    main()
