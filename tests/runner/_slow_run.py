"""Subprocess body of the crash tests: ``python -m tests.runner._slow_run ITEMS OUT REPORT``.

Scores the JudgeItem file ITEMS into the run directory OUT with the real reference judge on a
scripted engine of 50 ms latency (DSPy's disk cache on, in ``$ATTUNE_CACHE_DIR``), then writes
the engine's call count and the candidate numbers it was asked about to REPORT (JSON). The
parent test kills the first such process with SIGKILL part-way through.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from attune_judge.lm import configure_cache
from attune_judge.runner import ScoreConfig, run_score
from attune_judge.testing import ScriptedEngine
from tests.runner._real import candidate_number, reference_judge, scripted_answer


def main() -> None:
    items, out, report = (Path(p) for p in sys.argv[1:4])
    configure_cache(os.environ["ATTUNE_CACHE_DIR"])
    engine = ScriptedEngine(scripted_answer, latency_s=0.05)
    judge = reference_judge(engine, cache=True)
    config = ScoreConfig(
        data=items,
        out=out,
        lm="scripted/judge",
        max_concurrency=4,
        quiet=True,
        B=200,
    )
    result = run_score(config, judges=[judge])
    asked = sorted(candidate_number(m) for m in engine.requests)
    report.write_text(json.dumps({"calls": engine.calls, "asked": asked, "n_run": result.n_run}))


if __name__ == "__main__":
    main()
