"""Run every benchmark script in this folder, one after the other, in separate processes.

Each script prints its own figures (ratios against a baseline measured in the same run).
Usage: ``python benchmarks/run_all.py [name-filter] [--tiny]`` (``--tiny``: each at the small
size the test suite runs).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    tiny = ["--tiny"] if "--tiny" in sys.argv else []  # every script at its tiny size
    names = [a for a in sys.argv[1:] if a != "--tiny"]
    wanted = names[0] if names else ""
    failed = []
    for script in sorted(here.glob("bench_*.py")):
        if wanted not in script.name:
            continue
        print(f"=== {script.name}", flush=True)
        rc = subprocess.call([sys.executable, str(script), *tiny])
        if rc != 0:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
