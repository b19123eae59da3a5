"""The benchmark scripts cannot rot (issue 44, point 5): every ``benchmarks/*.py`` imports (its
``main`` not run), and the HTTP runner benchmark behind the README's throughput figure, which
crashed on the typed summary, runs end to end at a tiny size (``bench_runner.py`` had the same
fault; only its import is checked here, to keep the suite fast). No timing is asserted: only
that they run and what they count agrees."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name[:-3]}", BENCHMARKS / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_benchmark_script_imports_and_has_a_main(name: str) -> None:
    assert callable(getattr(_load(name), "main", None))


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("name", "argv"),
    [
        ("bench_fault_server.py", ["--n", "6", "--warmup", "0", "--latency", "0.01"]),
    ],
)
def test_http_benchmarks_run_at_a_tiny_size(
    name: str,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))  # restored after
    monkeypatch.setattr(sys, "argv", [name, *argv, "--concurrency", "4"])
    # by its own name, from a path worker processes (spawned) also get: they unpickle the
    # script's functions
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    importlib.import_module(name[:-3]).main()
    out = capsys.readouterr().out
    figures = json.loads(out[out.index("{") :])
    text = json.dumps(figures)
    assert '"ok": 6' in text, text
    if name == "bench_fault_server.py":
        assert figures["requests_equal_attempts"] is True
