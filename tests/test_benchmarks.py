"""The benchmark scripts cannot rot (issue 44, point 5): every ``benchmarks/*.py`` runs at its
tiny size (``--tiny``: a few items, a few bootstrap draws, one round) in the suite, found by
globbing the folder, so a new script is run too, or fails here until it has a tiny size or a
reason to skip from the short list below. Nothing is timed: the scripts print ratios; checked
is that they run to the end, print their figures, and, where they count, that the counts
agree."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))

ALLOWED_SKIP_REASONS = (
    "reads an external git snapshot",
    "loads the embedded model",
)
"""Why a script may be left out of the tiny run: nothing else."""

RUN_EMBEDDED = os.environ.get("ATTUNE_BENCH_EMBEDDED") == "1"
"""``ATTUNE_BENCH_EMBEDDED=1``: run the embedded model's scripts too (about 2.5 minutes at
their tiny sizes on a loaded 2-core machine, most of it ``bench_score_modes.py``'s four modes:
too long for every suite run)."""

SKIPS = {
    "extract_alpaca_eval.py": "reads an external git snapshot of the AlpacaEval repository "
    "(not in this repository, no network in tests); what it wrote is read by "
    "bench_length_control.py, which runs",
}

ARGV = {"measure_embedded_judge.py": ["run", "--tiny"]}
"""The tiny command line of a script, when it is not ``--tiny`` alone."""

EMBEDDED = {
    "bench_embedded_prefix.py",
    "bench_score_modes.py",
    "measure_embedded_judge.py",
    "measure_outside_mass.py",
}
"""Scripts that load the embedded llama.cpp model (installed by ``make env``)."""

EMBEDDED_SKIP = (
    "loads the embedded model: minutes of CPU even at one item per mode; "
    "ATTUNE_BENCH_EMBEDDED=1 runs it"
)

LIGHT = {
    "bench_bootstrap.py",
    "bench_bradley_terry.py",
    "bench_length_control.py",
    "bench_style_control.py",
    "bench_view.py",
    "coverage_unequal_lengths.py",
    "fit_calibrated_heads.py",
    "sim_corrected_rates.py",
}
"""Computation only (no server, no subprocess, no model): not in the real-component group."""


def _marks(name: str) -> list[Any]:
    marks: list[Any] = [pytest.mark.timeout(300)]
    if name not in LIGHT:
        marks.append(pytest.mark.slow)  # starts a server, subprocesses or the model
    return marks


def test_every_skip_has_an_allowed_reason() -> None:
    assert set(SKIPS) <= set(SCRIPTS)
    assert EMBEDDED <= set(SCRIPTS)
    for name, reason in [*SKIPS.items(), *dict.fromkeys(EMBEDDED, EMBEDDED_SKIP).items()]:
        assert reason.startswith(ALLOWED_SKIP_REASONS), name


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in SCRIPTS])
def test_every_benchmark_script_runs_at_its_tiny_size(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    if name in SKIPS:
        pytest.skip(SKIPS[name])
    if name in EMBEDDED and not RUN_EMBEDDED:
        pytest.skip(EMBEDDED_SKIP)
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))  # restored after
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.chdir(tmp_path)  # anything a script writes by default lands here
    # by its own name, from a path worker processes (spawned) also get: they unpickle the
    # script's functions
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module(name[:-3])
    if name == "lean_judge.py":
        _run_lean_judge(module, tmp_path, monkeypatch)
        return
    if name == "run_all.py":  # every bench_* script at its tiny size: here one, the rest above
        monkeypatch.setattr(sys, "argv", [name, "bench_style_control", "--tiny"])
    else:
        monkeypatch.setattr(sys, "argv", [name, *ARGV.get(name, ["--tiny"])])
    code = module.main()
    out = capsys.readouterr().out
    assert not code, out
    assert out.strip(), f"{name} printed nothing"
    _check_counts(name, out)


def _check_counts(name: str, out: str) -> None:
    """What a script counts, where the tiny run can check it."""
    if name == "bench_fault_server.py":
        figures = json.loads(out[out.index("{") :])
        assert '"ok": 6' in json.dumps(figures)
        assert figures["requests_equal_attempts"] is True
    if name == "bench_ctrl_c.py":
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["all_exit_130"] and summary["clean_messages"]
        assert summary["workers_left"] == 0 and summary["duplicates"] == 0
    if name == "run_all.py":
        assert "=== bench_style_control.py" in out


def _run_lean_judge(module: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean reference has no size of its own: three items against a loopback server."""
    from bench_fault_server import _items

    from attune_judge.testing import FaultServer

    items, out = tmp_path / "items.jsonl", tmp_path / "lean.jsonl"
    _items(items, 3)
    with FaultServer(retry_after_s=0) as server:
        argv = ["lean_judge.py", str(items), str(out), "--api-base", server.url]
        monkeypatch.setattr(sys, "argv", [*argv, "--concurrency", "2"])
        asyncio.run(module.main())
        asked = server.requests
    lines = out.read_text("utf-8").splitlines()
    assert len(lines) == 3 and asked == 3
