"""Ctrl-C to exit at load (issue 44): the process executor against the thread executor.

``.venv/bin/python benchmarks/bench_ctrl_c.py [--rounds 3] [--n 2000] [--after 100]
[--latency 0.005] [--concurrency 32] [--workers 2]`` starts the fault server in its own process
(keep-alive, ``--latency`` per answer: a fast server, so the run is CPU-bound, its workers
busy) and, in each round, runs ``attune-judge score`` on ``--n`` items with the thread
executor and then with ``--executor process --workers W``, each a new process with a fresh run
directory and request cache. Once ``--after`` judgments are on disk it sends SIGINT (what
Ctrl-C sends) and times the command until it has exited. Checked each time: exit code 130,
the one-line message (no traceback, no leaked semaphores), no worker process left, every
recorded judgment exactly once. Printed: one JSON line per
run, then the medians: ``process_exit_s``, ``thread_exit_s`` and
``process_over_thread`` (the baseline is the thread executor's stop, measured in the same
run). ``--tiny``: one round on 200 items, interrupted after 5, the process executor only (for the
test suite).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable


def _children(pid: int) -> list[int]:
    """The worker processes (spawned by multiprocessing, not its resource tracker) whose
    parent is ``pid``, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and b"spawn_main" in _cmdline(stat.parent):
            found.append(int(stat.parent.name))
    return found


def _cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"  # a zombie has exited
    except OSError:
        return False


def interrupt_once(
    items: Path, out: Path, url: str, executor: str, args: argparse.Namespace
) -> dict[str, object]:
    """Run ``score`` until ``args.after`` judgments are recorded, SIGINT it, time the exit."""
    env = {**os.environ, "ATTUNE_CACHE_DIR": str(out.with_name(out.name + "-cache"))}
    argv = [PY, "-m", "attune_judge", "score", str(items), "--lm", "openai/fake"]
    argv += ["--api-base", url, "--response-format", "json_object", "-q", "-o", str(out)]
    argv += ["--max-concurrency", str(args.concurrency), "--executor", executor]
    argv += ["--workers", str(args.workers)] if executor == "process" else []
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log = out / "judgments.jsonl"
    deadline = time.monotonic() + 600
    while not (log.exists() and log.read_bytes().count(b"\n") >= args.after):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"{executor}: the run ended before {args.after} judgments")
        time.sleep(0.01)
    children = _children(proc.pid)
    recorded_before = log.read_bytes().count(b"\n")
    start = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    exit_s = time.perf_counter() - start
    from attune_judge.data import Judgment, read_jsonl

    ids = [(j.item_id, j.judge_id) for j in read_jsonl(log, Judgment)]
    return {
        "executor": executor,
        "exit_s": round(exit_s, 3),
        "returncode": proc.returncode,
        "clean_message": b"interrupted" in err and b"Traceback" not in err and b"leaked" not in err,
        "workers": len(children),
        "workers_left": sum(_alive(p) for p in children),
        "recorded_at_sigint": recorded_before,
        "recorded": len(ids),
        "duplicates": len(ids) - len(set(ids)),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--after", type=int, default=100, help="judgments before SIGINT")
    parser.add_argument("--latency", type=float, default=0.005)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--tiny", action="store_true", help="1 round, 200 items, SIGINT at 5, process only"
    )
    args = parser.parse_args()
    if args.tiny:
        args.rounds, args.n, args.after = 1, 200, 5
    sys.path.insert(0, str(HERE))
    from bench_fault_server import _items

    tmp = Path(tempfile.mkdtemp(prefix="bench-ctrl-c-"))
    items = tmp / "items.jsonl"
    _items(items, args.n)
    server = subprocess.Popen(
        [
            PY,
            "-c",
            "import sys,time\nfrom attune_judge.testing import FaultServer\n"
            f"with FaultServer(latency_s={args.latency}, keep_alive=True) as s:\n"
            "    print(s.url, flush=True); time.sleep(36000)",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # its handlers' reset connections
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    kinds = ("process",) if args.tiny else ("thread", "process")
    runs: dict[str, list[dict[str, object]]] = {kind: [] for kind in kinds}
    try:
        for r in range(args.rounds):
            for executor in kinds:
                row = interrupt_once(items, tmp / f"run-{executor}-{r}", url, executor, args)
                print(json.dumps(row), flush=True)
                runs[executor].append(row)
    finally:
        server.terminate()
        server.wait(10)
        server.stdout.close()
    med = {e: statistics.median(float(str(row["exit_s"])) for row in runs[e]) for e in runs}
    every = [row for rows in runs.values() for row in rows]
    medians = {f"{e}_exit_s": round(m, 3) for e, m in med.items()}
    if "thread" in med:
        medians["process_over_thread"] = round(med["process"] / med["thread"], 2)
    print(
        json.dumps(
            {
                "median": medians,
                "all_exit_130": all(row["returncode"] == 130 for row in every),
                "clean_messages": all(row["clean_message"] for row in every),
                "workers_left": sum(int(str(row["workers_left"])) for row in every),
                "duplicates": sum(int(str(row["duplicates"])) for row in every),
            }
        )
    )


if __name__ == "__main__":
    main()
