"""End to end against the lean reference (issue 47): ``attune-judge score`` beside
``lean_judge.py`` (an OpenAI client + asyncio, 60 lines) on the same loopback server.

``.venv/bin/python benchmarks/bench_end_to_end.py [--rounds 2] [--latency 0.05]
[--concurrency 32]`` starts the fault server in its own process (keep-alive, ``--latency`` per
answer) and, in each round, alternates: the lean script and ``score`` on 10 items, then on
1,000 items (fresh run directory and request cache each time), then ``score`` again on the
finished 1,000-item directory (the cached rerun: it asks nothing). Every command is a new
process, timed from start to exit (interpreter start, imports, summary, report.md,
report.html and figures included). ``PYTHONDONTWRITEBYTECODE`` (set on some machines) is unset
for every command, and one warm-up ``score`` runs before the first round, so the modules run
from cached bytecode as an installed package's do (with it set, every command compiled the
package's source again: about 0.3-0.5 s each). It prints one JSON line per round and the medians:
``score_10_over_lean`` (and, beside LiteLLM's lean script, the peer issue 47 measured,
``score_10_over_lean_litellm``; not with ``--tiny``), ``score_1000_over_ideal`` (ideal =
n × latency ÷ concurrency), ``lean_1000_over_ideal`` and ``cached_rerun_s``. LiteLLM's price
table is read locally (``LITELLM_LOCAL_MODEL_COST_MAP``), as in the tests: no network.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _score(items: Path, url: str, concurrency: int, out: Path) -> list[str]:
    return [
        PY,
        "-m",
        "attune_judge",
        "score",
        str(items),
        "--lm",
        "openai/fake",
        "--api-base",
        url,
        "--response-format",
        "json_object",
        "--max-concurrency",
        str(concurrency),
        "-q",
        "-o",
        str(out),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--tiny", action="store_true", help="1 round, 40 items for the 1,000")
    args = parser.parse_args()
    big = 40 if args.tiny else 1000  # --tiny (the suite): the "1000" figures are of 40 items
    args.rounds = 1 if args.tiny else args.rounds
    sys.path.insert(0, str(HERE))
    from bench_fault_server import _items

    tmp = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base_env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    server = subprocess.Popen(
        [
            PY,
            "-c",
            "import sys,time\nfrom attune_judge.testing import FaultServer\n"
            f"with FaultServer(latency_s={args.latency}, keep_alive=True) as s:\n"
            "    print(s.url, flush=True); time.sleep(36000)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    rows = []
    try:
        warm = tmp / "items-warm.jsonl"
        _items(warm, 2, tag="warm-")
        warm_env = {**base_env, "ATTUNE_CACHE_DIR": str(tmp / "cache-warm")}
        _timed(_score(warm, url, args.concurrency, tmp / "run-warm"), warm_env)
        for r in range(args.rounds):
            row: dict[str, float] = {"load": round(os.getloadavg()[0], 2)}
            for n in (10, 1000):
                items = tmp / f"items-{r}-{n}.jsonl"
                _items(items, n if n == 10 else big, tag=f"{r}-")
                env = {**base_env, "ATTUNE_CACHE_DIR": str(tmp / f"cache-{r}-{n}")}
                lean = [PY, str(HERE / "lean_judge.py"), str(items), str(tmp / f"lean-{r}-{n}")]
                lean += ["--api-base", url, "--concurrency", str(args.concurrency)]
                row[f"lean_{n}_s"] = _timed(lean, env)
                if n == 10 and not args.tiny:  # issue 47's own peer (LiteLLM: seconds to import)
                    row["lean_litellm_10_s"] = _timed([*lean, "--client", "litellm"], env)
                score = _score(items, url, args.concurrency, tmp / f"run-{r}-{n}")
                row[f"score_{n}_s"] = _timed(score, env)
                if n == 1000:
                    row["cached_rerun_s"] = _timed(score, env)
            ideal = big * args.latency / args.concurrency
            row["score_10_over_lean"] = row["score_10_s"] / row["lean_10_s"]
            if "lean_litellm_10_s" in row:
                row["score_10_over_lean_litellm"] = row["score_10_s"] / row["lean_litellm_10_s"]
            row["score_1000_over_ideal"] = row["score_1000_s"] / ideal
            row["lean_1000_over_ideal"] = row["lean_1000_s"] / ideal
            row = {k: round(v, 3) for k, v in row.items()}
            print(json.dumps(row), flush=True)
            rows.append(row)
    finally:
        server.terminate()
        server.wait(10)
        server.stdout.close()
    keys = [
        "score_10_over_lean",
        "score_10_over_lean_litellm",
        "score_1000_over_ideal",
        "lean_1000_over_ideal",
        "cached_rerun_s",
        "lean_10_s",
        "score_10_s",
        "score_1000_s",
        "lean_1000_s",
    ]
    print(
        json.dumps(
            {
                "median": {
                    k: round(statistics.median(r[k] for r in rows), 3) for k in keys if k in rows[0]
                }
            }
        )
    )


if __name__ == "__main__":
    main()
