"""Runner benchmark over HTTP: 2,000 judgments against the fault server (no faults), 50 ms
per request, concurrency 32 — the whole client path a user's run takes.

Run ``.venv/bin/python benchmarks/bench_fault_server.py`` (options: ``--n``, ``--latency``,
``--concurrency``, ``--fault-mix`` e.g. ``rate_limit=0.1,server_error=0.05``). It starts
:class:`attune_judge.testing.FaultServer` in a separate process (loopback, keep-alive
connections, a fixed latency per request) and runs ``run_score`` as ``attune-judge score``
would: the reference-graded judge, ``--lm openai/fake --api-base URL --response-format
json_object``, DSPy's own HTTP engine over real sockets, DSPy's disk cache in a temporary
``ATTUNE_CACHE_DIR``, the run directory with its lock, append-only log and summary. It prints
one JSON object with

* ``judgments_per_s`` and ``ratio_to_ideal`` = wall ÷ (n × latency / concurrency) of the fresh
  run (1.0 would be a client with no overhead at all),
* the requests the server counted against the attempts the runs recorded (equal, or a run
  hides requests), the run's counts per status,
* the wall time of an untimed warm-up run of ``--warmup`` judgments (default 32) into another
  directory, made first so that one-off costs (HTTP clients, lazy imports) stay out of the ratio,
* the same command again on the finished directory: its wall time and the requests it sent
  (0: every judgment is skipped),
* the client's CPU per judgment (user + system CPU of this process, which is only the client:
  the server runs in another process) over the timed run,
* the machine's cores and load average before and after (a busy machine inflates the ratio).

``--compare-litellm`` (``json_object`` only) also runs the route ``json_object`` took before
issue 28 — LiteLLM and the OpenAI SDK (``engine="litellm"``) — on fresh directories, alternating
with the current route (DSPy's own HTTP engine) ``--repeat`` times after a warm-up of each, and
prints both CPU-per-judgment and wall-time medians and their ratios (``litellm_over_native``),
and the route of a URL with credentials (``http://user:pw@host/v1?key=K``, issue 44: DSPy's
engine with the credentials added by its transport; LiteLLM before) as
``credentialed_over_native``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from attune_judge.lm import LMSettings


def _serve(conn: Any, latency_s: float, mix: dict[str, float], seed: int) -> None:
    """Child process: serve until told to stop, then send the request counts back."""
    from attune_judge.testing import FaultServer

    with FaultServer(mix, latency_s=latency_s, keep_alive=True, seed=seed, retry_after_s=0) as s:
        conn.send(s.url)
        conn.recv()  # "stop"
        ru = resource.getrusage(resource.RUSAGE_SELF)  # the server's own CPU, all its requests
        cpu = ru.ru_utime + ru.ru_stime
        conn.send({"requests": s.requests, "faults": dict(s.faults()), "cpu_s": cpu})


def _items(path: Path, n: int, *, tag: str = "") -> None:
    from attune_judge.data import ChatMessage, JudgeItem, write_jsonl

    turns, items = 5, []
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
                candidate=f"Reply {tag}{k}: I'm sorry you're dealing with that.",
                candidate_model=f"m{model}",
                reference="That sounds exhausting. Do you want to talk it through?",
            )
        )
    write_jsonl(path, items)


def _score(items: Path, out: Path, url: str, args: argparse.Namespace) -> tuple[float, Any]:
    from attune_judge.runner import ScoreConfig, run_score

    config = ScoreConfig(
        data=items,
        out=out,
        lm="openai/fake",
        max_concurrency=args.concurrency,
        executor=args.executor,
        workers=args.workers,
        retry_base_delay_s=0.0,
        max_failure_rate=1.0,
        B=200,
        quiet=True,
        lm_settings=LMSettings(api_base=url, response_format=args.response_format),
    )
    start = time.perf_counter()
    result = run_score(config)
    return time.perf_counter() - start, result


def _cpu() -> float:
    """User + system CPU seconds of this process (the client; the server is another)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    # + finished children: the process executor's workers (the server is still running then)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime + kids.ru_utime + kids.ru_stime


def _attempts(run_dir: Path) -> int:
    from attune_judge.data import Judgment, read_jsonl

    return sum(int(j.details.get("attempts", 1)) for j in read_jsonl(run_dir, Judgment))


def _mix(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, p = part.partition("=")
        out[name.strip()] = float(p)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--fault-mix", default="", help="e.g. rate_limit=0.1 (default: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--executor", choices=("thread", "process"), default="thread")
    parser.add_argument("--workers", type=int, default=2, help="processes of --executor process")
    parser.add_argument(
        "--response-format",
        default="json_object",
        help="json_object (LiteLLM under DSPy) or json_schema (DSPy's own HTTP engine)",
    )
    parser.add_argument(
        "--warmup", type=int, default=32, help="judgments of an untimed run first (0: none)"
    )
    parser.add_argument(
        "--compare-litellm",
        action="store_true",
        help="also time the route of a URL with credentials and the former json_object route "
        "(LiteLLM), alternating with the plain one (--repeat times)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="alternations of --compare-litellm")
    parser.add_argument(
        "--tiny", action="store_true", help="6 judgments, no warm-up, 10 ms (the suite)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.n, args.warmup, args.latency, args.concurrency = 6, 0, 0.01, 4

    tmp = Path(tempfile.mkdtemp(prefix="bench-fault-server-"))
    os.environ["ATTUNE_CACHE_DIR"] = str(tmp / "cache")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import dspy  # noqa: F401
    import litellm  # noqa: F401

    import attune_judge.runner  # noqa: F401  (import cost outside the timed region)

    _items(tmp / "items.jsonl", args.n)
    _items(tmp / "warmup.jsonl", args.warmup, tag="warm-up ")
    parent, child = mp.Pipe()
    server = mp.get_context("spawn").Process(
        target=_serve, args=(child, args.latency, _mix(args.fault_mix), args.seed), daemon=True
    )
    server.start()
    url = parent.recv()
    load_before = os.getloadavg()[0]
    try:
        # first requests pay one-off costs (LiteLLM's and the SDK's clients, lazy imports):
        # a short run into another directory first, so the timed run measures the steady state
        warmup_wall = (
            _score(tmp / "warmup.jsonl", tmp / "warmup", url, args)[0] if args.warmup else 0.0
        )
        cpu_before = _cpu()
        wall, first = _score(tmp / "items.jsonl", tmp / "run", url, args)
        cpu = _cpu() - cpu_before
        attempts = _attempts(tmp / "run" / "judgments.jsonl") + (
            _attempts(tmp / "warmup" / "judgments.jsonl") if args.warmup else 0
        )
        rerun_wall, rerun = _score(tmp / "items.jsonl", tmp / "run", url, args)
        compared = _compare(tmp, url, args) if args.compare_litellm else None
        if compared is not None:  # the server counted these runs' requests too
            runs = [d for d in tmp.glob("*-*") if (d / "judgments.jsonl").exists()]
            attempts += sum(_attempts(d / "judgments.jsonl") for d in runs)
    finally:
        parent.send("stop")
        served = parent.recv()
        server.join(timeout=10)
    ideal = args.n * args.latency / args.concurrency
    figures = {
        "n": args.n,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "executor": args.executor,
        "fault_mix": _mix(args.fault_mix),
        "response_format": args.response_format,
        "cores": os.cpu_count(),
        "loadavg_1min_before": round(load_before, 2),
        "warmup_judgments": args.warmup,
        "warmup_s": round(warmup_wall, 3),
        "ideal_s": round(ideal, 3),
        "wall_s": round(wall, 3),
        "judgments_per_s": round(args.n / wall, 1),
        "ratio_to_ideal": round(wall / ideal, 3) if ideal else None,
        "client_cpu_ms_per_judgment": round(1000 * cpu / args.n, 2),
        "n_by_status": first.n_by_status,
        "server_requests": served["requests"],
        "attempts_recorded": attempts,
        "requests_equal_attempts": served["requests"] == attempts,
        "server_faults": served["faults"],
        # the server process over all its requests (warm-up and rerun included): CPU the 2 cores
        # also had to give the server, beside the client's
        "server_cpu_ms_per_request": round(1000 * served["cpu_s"] / max(1, served["requests"]), 2),
        "rerun_s": round(rerun_wall, 3),
        "rerun_n_run": rerun.n_run,
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
        "parent_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if compared is not None:
        figures["compare_litellm"] = compared
    print(json.dumps(figures, indent=2))


def _credentialed(url: str) -> str:
    """``url`` with a user:password and a query key (the server ignores both)."""
    head, rest = url.split("://", 1)
    return f"{head}://bench:pw-bench@{rest}?key=bench-key"


def _compare(tmp: Path, url: str, args: argparse.Namespace) -> dict[str, Any]:
    """The native json_object route on a plain URL, the same on a URL with credentials
    (user:password and ``?key=``) and the former LiteLLM route, alternating on fresh
    directories."""
    import statistics
    from unittest import mock

    import attune_judge.lm._resolve as resolve

    def litellm_route() -> Any:
        return mock.patch.object(resolve, "send_json_object_natively", lambda: False)

    routes = {
        "native": (contextlib.nullcontext, url),
        "credentialed": (contextlib.nullcontext, _credentialed(url)),
        "litellm": (litellm_route, url),
    }
    for name, (route, address) in routes.items():  # one-off costs outside the timing
        _items(tmp / f"warmup-{name}.jsonl", args.warmup or 32, tag=f"warm-up {name} ")
        with route():
            _score(tmp / f"warmup-{name}.jsonl", tmp / f"warmup-{name}", address, args)
    cpu: dict[str, list[float]] = {name: [] for name in routes}
    wall: dict[str, list[float]] = {name: [] for name in routes}
    for k in range(args.repeat):
        for name, (route, address) in routes.items():
            items = tmp / f"items-{name}-{k}.jsonl"  # new texts: no answer from the cache
            _items(items, args.n, tag=f"{name} {k} ")
            with route():
                before = _cpu()
                seconds, result = _score(items, tmp / f"{name}-{k}", address, args)
            cpu[name].append(1000 * (_cpu() - before) / args.n)
            wall[name].append(seconds)
            assert result.n_by_status.get("ok") == args.n, (name, result.n_by_status)
    med = {name: statistics.median(v) for name, v in cpu.items()}
    med_wall = {name: statistics.median(v) for name, v in wall.items()}
    ideal = args.n * args.latency / args.concurrency
    return {
        "cpu_ms_per_judgment": {k: [round(x, 2) for x in v] for k, v in cpu.items()},
        "wall_s": {k: [round(x, 3) for x in v] for k, v in wall.items()},
        "median_cpu_ms_per_judgment": {k: round(v, 2) for k, v in med.items()},
        "median_ratio_to_ideal": {k: round(v / ideal, 3) for k, v in med_wall.items()},
        "litellm_over_native_cpu": round(med["litellm"] / med["native"], 2),
        "litellm_over_native_wall": round(med_wall["litellm"] / med_wall["native"], 2),
        "credentialed_over_native_cpu": round(med["credentialed"] / med["native"], 2),
        "credentialed_over_native_wall": round(med_wall["credentialed"] / med_wall["native"], 2),
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    main()
