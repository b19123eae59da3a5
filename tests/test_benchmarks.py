"""The benchmark scripts cannot rot (issue 44, point 5): every ``benchmarks/*.py`` runs at its
tiny size (``--tiny``: a few items, a few bootstrap draws, one round; the embedded model's
scripts one or two items, no warm-up) in the suite, found by globbing the folder, so a new
script is run too, or fails here until it has a tiny size; none is skipped. Nothing is timed:
the scripts print ratios; checked is that they run to the end, print their figures, and, where
they count, that the counts agree."""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))

ARGV = {"measure_embedded_judge.py": ["run", "--tiny"]}
"""The tiny command line of a script, when it is not ``--tiny`` alone."""

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


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in SCRIPTS])
def test_every_benchmark_script_runs_at_its_tiny_size(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
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
    if name == "extract_alpaca_eval.py":
        _run_extract_alpaca_eval(module, tmp_path, monkeypatch, capsys)
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

    items = tmp_path / "items.jsonl"
    _items(items, 3)
    for client in ("openai", "litellm"):  # the SDK alone, and issue 47's own peer
        out = tmp_path / f"lean-{client}.jsonl"
        with FaultServer(retry_after_s=0) as server:
            argv = ["lean_judge.py", str(items), str(out), "--api-base", server.url]
            monkeypatch.setattr(sys, "argv", [*argv, "--concurrency", "2", "--client", client])
            asyncio.run(module.main())
            asked = server.requests
        lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
        assert asked == 3 and [r["status"] for r in lines] == ["ok"] * 3, (client, lines)


def _run_extract_alpaca_eval(
    module: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The extraction has no size of its own: it reads a git snapshot of the AlpacaEval
    repository. Here a repository of the same layout is built from a few records of the
    10-model sample in ``tests/fixtures/alpaca_eval`` (cut from the real snapshot's extraction):
    the script must give those records back, in the files ``bench_length_control.py`` reads,
    and apply AlpacaEval's conventions to a failed annotation (0: a tie), a missing preference
    (dropped), the baseline and a model off the leaderboard (not written) and an annotation
    file the snapshot lists but does not hold (skipped, counted)."""
    import csv
    import gzip
    import subprocess

    import bench_length_control

    from tests.conftest import FIXTURES

    with gzip.open(FIXTURES / "alpaca_eval" / "pairs_sample.csv.gz", "rt", newline="") as fh:
        pairs = list(csv.DictReader(fh))
    with open(FIXTURES / "alpaca_eval" / "published_sample.csv", newline="") as fh:
        published = list(csv.DictReader(fh))
    models = ("NullModel", "alpaca-7b", "claude-2.1")
    kept = [r for m in models for r in [p for p in pairs if p["model"] == m][:4]]  # 4 each
    n = max(int(r["instruction"]) for r in kept) + 3  # instructions in the baseline's file
    failed, unannotated = n - 2, n - 1
    fields = ("model", "instruction", "len_model", "len_baseline", "preference")
    want = [tuple(r[f] for f in fields) for r in kept]
    want.append(("claude-2.1", str(failed), "7", "5", "0.5"))

    base, annotator = module.BASELINE, module.ANNOTATOR

    def annotation(model: str, k: int, len_model: int, len_base: int, pref: Any) -> Any:
        return {
            "instruction": f"instruction {k}",
            "output_1": "b" * len_base,
            "generator_1": base,
            "output_2": "m" * len_model,
            "generator_2": model,
            "annotator": annotator,
            "preference": pref,
        }

    files: dict[str, list[Any]] = {m: [] for m in (*models, "unlisted", "absent")}
    for model, k, len_model, len_base, pref in want[:-1]:  # AlpacaEval's preference: [1, 2]
        files[model].append(
            annotation(model, int(k), int(len_model), int(len_base), 1 + float(pref))
        )
    files["claude-2.1"].append(annotation("claude-2.1", failed, 7, 5, 0))
    files["claude-2.1"].append(annotation("claude-2.1", unannotated, 6, 5, None))
    files["unlisted"].append(annotation("unlisted", 0, 3, 5, 1.5))
    files["absent"].append(annotation("absent", 0, 4, 5, 1.25))
    files[base] = [annotation(base, k, 5, 5, 1.5) for k in range(n)]
    repo = tmp_path / "alpaca_eval"
    for model, records in files.items():
        path = repo / "results" / model / annotator / "annotations.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(records), "utf-8")
    board = [",win_rate,mode,length_controlled_winrate"]
    for r in published:
        if r["model"] in models:
            board.append(f"{r['model']},{r['win_rate']},verified,{r['length_controlled_winrate']}")
    board += [f"{base},50.0,verified,50.0", "absent,1.0,verified,2.0", "elsewhere,3.0,,4.0"]
    path = repo / "src/alpaca_eval/leaderboards/data_AlpacaEval_2"
    path.mkdir(parents=True)
    (path / f"{annotator}_leaderboard.csv").write_text("\n".join(board) + "\n", "utf-8")

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
        return done.stdout.decode().strip()

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--no-gpg-sign", "-m", ".")
    # a large file the snapshot lacks: listed in the tree, its blob not stored
    blob = git("rev-parse", f"HEAD:results/absent/{annotator}/annotations.json")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()

    out = tmp_path / "data"
    monkeypatch.setattr(sys, "argv", ["extract_alpaca_eval.py", str(repo), "--out", str(out)])
    module.main()
    printed = capsys.readouterr().out
    assert (
        f"3 models written; not on the leaderboard or the baseline: ['{base}', 'unlisted']"
        in printed
    )
    assert "absent from the snapshot: 2 leaderboard rows" in printed  # absent, elsewhere

    monkeypatch.setattr(bench_length_control, "DATA", out)
    cols, pub = bench_length_control.load()
    got = list(zip(*(cols[f] for f in fields), strict=True))
    assert sorted(r[:4] for r in got) == sorted(r[:4] for r in want)
    by_row = {r[:2]: float(r[4]) for r in want}
    assert {r[:2]: float(str(r[4])) for r in got} == pytest.approx(by_row, abs=1e-12)
    assert pub == {
        r["model"]: (float(r["length_controlled_winrate"]), float(r["win_rate"]))
        for r in published
        if r["model"] in models
    }
