"""How fast the command line answers ``--help``, against ``python -c "import typer, pydantic"``.

Each command line runs ``--repeat`` times, interleaved with the baseline so that load changes
hit both alike; the script prints the median wall time and the median CPU time (user + system
of the child) of each, and the ratio to the baseline's. Target (issue 23): ``attune-judge
--help`` and ``attune-judge COMMAND --help`` at most 2x the baseline.

    .venv/bin/python benchmarks/bench_cli_start.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = [
    [],
    ["score"],
    ["calibrate"],
    ["validate"],
    ["sensitivity"],
    ["bench"],
    ["align"],
    ["demo"],
    ["data", "convert"],
]


def _run(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd`` (output discarded)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--tiny", action="store_true", help="one run of each command line (the suite)"
    )
    args = parser.parse_args()
    if args.tiny:
        args.repeat = 1
    baseline = [sys.executable, "-c", "import typer, pydantic"]
    cli = str(BIN / "attune-judge")
    runs: dict[str, list[tuple[float, float]]] = {"baseline": []}
    for _ in range(args.repeat):
        for sub in COMMANDS:
            runs["baseline"].append(_run(baseline))
            name = " ".join(["attune-judge", *sub, "--help"])
            runs.setdefault(name, []).append(_run([cli, *sub, "--help"]))
    base_wall = statistics.median(w for w, _ in runs["baseline"])
    base_cpu = statistics.median(c for _, c in runs["baseline"])
    print(f"load average at end: {os.getloadavg()[0]:.2f}; {args.repeat} runs each (median)")
    print(f"{'command':36s} {'wall s':>7s} {'ratio':>6s} {'cpu s':>7s} {'ratio':>6s}")
    print(f"{'python -c import typer, pydantic':36s} {base_wall:7.3f} {'1.00':>6s} {base_cpu:7.3f}")
    worst = 0.0
    for name, vals in runs.items():
        if name == "baseline":
            continue
        wall = statistics.median(w for w, _ in vals)
        cpu = statistics.median(c for _, c in vals)
        worst = max(worst, wall / base_wall)
        print(f"{name:36s} {wall:7.3f} {wall / base_wall:6.2f} {cpu:7.3f} {cpu / base_cpu:6.2f}")
    print(f"worst wall ratio {worst:.2f} (target <= 2.00)")


if __name__ == "__main__":
    main()
