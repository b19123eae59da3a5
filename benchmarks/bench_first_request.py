"""Time from ``attune-judge score`` starting to its first model request, beside ``import dspy``.

A loopback :class:`attune_judge.testing.FaultServer` answers every request and notes when the
first one arrives; ``score`` runs as a subprocess on one shipped sample conversation, in a new
run directory each time (nothing cached: ``ATTUNE_CACHE=0``). Interleaved ``--repeat`` times
with ``python -c "import dspy"`` so load changes hit both alike; medians are printed. Target
(issue 29, point 5): at most 3 s on a quiet 2-core machine.

    .venv/bin/python benchmarks/bench_first_request.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from attune_judge.testing import FaultServer, answer_for_schema

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "samples" / "attunebench" / "conversation_5.json"
CLI = str(Path(sys.executable).parent / "attune-judge")
FORMATS = ("json_schema", "json_object")
"""Both go through DSPy's native HTTP engine (``json_object``, the default for an
OpenAI-compatible ``--api-base`` since llama.cpp's server rejects ``json_schema``, went through
LiteLLM, whose import alone takes seconds, until issue 28's third wave)."""


def _first_request_seconds(workdir: Path, k: int, fmt: str) -> float:
    first: list[float] = []
    lock = threading.Lock()

    def answer(schema: dict[str, Any], text: str, rng: Any) -> dict[str, Any]:
        with lock:
            if not first:
                first.append(time.perf_counter())
        return answer_for_schema(schema, rng)

    env = {**os.environ, "ATTUNE_CACHE": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with FaultServer(answer=answer) as server:
        cmd = [CLI, "score", str(DATA), "--lm", "openai/fake", "--api-base", server.url]
        cmd += ["--response-format", fmt, "-q", "-B", "100", "-o", str(workdir / f"{fmt}{k}")]
        start = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not first:
        raise SystemExit("score sent no request: " + " ".join(cmd))
    return first[0] - start


def _import_dspy_seconds() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import dspy"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tiny", action="store_true", help="one run each (the suite)")
    args = parser.parse_args()
    if args.tiny:
        args.repeat = 1
    firsts: dict[str, list[float]] = {fmt: [] for fmt in FORMATS}
    dspys = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):
            dspys.append(_import_dspy_seconds())
            for fmt in FORMATS:
                firsts[fmt].append(_first_request_seconds(Path(tmp), k, fmt))
    base = statistics.median(dspys)
    print(f"load average at end: {os.getloadavg()[0]:.2f}; {args.repeat} runs each (median)")
    print(f"python -c 'import dspy'                               {base:6.2f} s")
    for fmt in FORMATS:
        first = statistics.median(firsts[fmt])
        verdict = "met" if first <= 3.0 else "not met"
        print(
            f"score --response-format {fmt:11s}: first request {first:6.2f} s "
            f"({first / base:.2f}x import dspy; <= 3 s {verdict})"
        )


if __name__ == "__main__":
    main()
