"""Run every benchmark script in this folder, one after the other, in separate processes.

Each script prints its own figures (ratios against a baseline measured in the same run).
Usage: ``python benchmarks/run_all.py [name-filter]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    failed = []
    for script in sorted(here.glob("bench_*.py")):
        if wanted not in script.name:
            continue
        print(f"=== {script.name}", flush=True)
        rc = subprocess.call([sys.executable, str(script)])
        if rc != 0:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
