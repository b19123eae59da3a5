"""A report rewritten over an unchanged run draws nothing (issue 47: the cached rerun).

``write_report`` keeps, in the run directory, which figure file each figure call (function +
arguments + code and drawing libraries) produced; a call whose inputs did not change takes
that file's bytes instead of drawing. Draws are counted at matplotlib's ``Figure.savefig``
(every figure is rendered through it), files by their bytes and modification times: no
seconds are measured here.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure as MplFigure

from attune_judge.cli import main
from attune_judge.report import write_report
from tests.conftest import REPO_ROOT, SAMPLES
from tests.report._rundir import JUDGE_ID, make_run_dir

FOREST = f"{JUDGE_ID}-leaderboard-forest.png"
STATUS = f"{JUDGE_ID}-failures-status.png"
OUTPUTS = ("report.md", "report.html", f"figures/{FOREST}", f"figures/{STATUS}")


@pytest.fixture
def draws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per figure rendered to PNG in this test."""
    seen: list[int] = []
    savefig = MplFigure.savefig

    def counting(self: MplFigure, *args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        return savefig(self, *args, **kwargs)

    monkeypatch.setattr(MplFigure, "savefig", counting)
    return seen


def _state(run: Path) -> dict[str, tuple[bytes, int]]:
    return {name: ((run / name).read_bytes(), (run / name).stat().st_mtime_ns) for name in OUTPUTS}


def _edit_forest_estimate(run: Path, edit: Any) -> None:
    """Change the first leaderboard row's estimate in summary.json (what the forest plot
    shows; the status plot's counts stay)."""
    path = run / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    score = summary["judges"][JUDGE_ID]["leaderboard"]["rows"][0]["score"]
    score["estimate"] = edit(score["estimate"])
    path.write_text(json.dumps(summary), encoding="utf-8")


def test_an_unchanged_run_is_rewritten_without_drawing_or_touching_a_file(
    tmp_path: Path, draws: list[int]
) -> None:
    run = make_run_dir(tmp_path / "run")
    write_report(run)
    assert len(draws) == 2  # the forest and the status plot
    first = _state(run)
    write_report(run)
    assert len(draws) == 2  # nothing drawn again
    assert _state(run) == first  # same bytes, and no file was even rewritten


def test_only_the_figure_whose_data_changed_is_drawn_again(
    tmp_path: Path, draws: list[int]
) -> None:
    run = make_run_dir(tmp_path / "run")
    write_report(run)
    first = _state(run)
    _edit_forest_estimate(run, lambda v: v - 0.25)
    write_report(run)
    assert len(draws) == 3  # the forest plot, not the status plot
    now = _state(run)
    assert now[f"figures/{FOREST}"][0] != first[f"figures/{FOREST}"][0]
    assert now[f"figures/{STATUS}"] == first[f"figures/{STATUS}"]
    # drawn from scratch, the changed report's figures are the same bytes
    fresh = make_run_dir(tmp_path / "fresh")
    _edit_forest_estimate(fresh, lambda v: v - 0.25)
    write_report(fresh)
    for name in (FOREST, STATUS):
        assert (fresh / "figures" / name).read_bytes() == (run / "figures" / name).read_bytes()


def test_the_key_sees_the_last_bit_of_a_number(tmp_path: Path, draws: list[int]) -> None:
    """One ulp: printed the same to three decimals, but another input, so drawn again."""
    run = make_run_dir(tmp_path / "run")
    write_report(run)
    _edit_forest_estimate(run, lambda v: math.nextafter(v, math.inf))
    write_report(run)
    assert len(draws) == 3


def test_a_figure_file_changed_on_disk_is_drawn_again(tmp_path: Path, draws: list[int]) -> None:
    run = make_run_dir(tmp_path / "run")
    write_report(run)
    original = (run / "figures" / FOREST).read_bytes()
    (run / "figures" / FOREST).write_bytes(b"\x89PNG edited by hand")
    (run / "figures" / STATUS).unlink()
    write_report(run)
    assert len(draws) == 4  # both drawn again
    assert (run / "figures" / FOREST).read_bytes() == original
    assert (run / "figures" / STATUS).is_file()


def test_a_users_matplotlibrc_is_part_of_the_key(
    tmp_path: Path, draws: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run_dir(tmp_path / "run")
    write_report(run)
    rc = tmp_path / "matplotlibrc"
    rc.write_text("font.family: serif\n", encoding="utf-8")
    monkeypatch.setenv("MATPLOTLIBRC", str(rc))
    write_report(run)
    assert len(draws) == 4
    write_report(run)
    assert len(draws) == 4
    rc.write_text("font.family: monospace\n", encoding="utf-8")
    write_report(run)
    assert len(draws) == 6


def test_a_rewrite_of_an_unchanged_run_does_not_import_matplotlib(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    write_report(run)
    before = (run / "report.html").read_bytes()
    code = (
        "import sys\nfrom attune_judge.report import write_report\n"
        f"write_report({str(run)!r})\nprint('matplotlib' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "False", out.stderr
    assert (run / "report.html").read_bytes() == before


def test_a_cached_score_rerun_draws_no_figure(tmp_path: Path, draws: list[int]) -> None:
    """``score`` twice on the same directory: the second asks nothing and draws nothing, and
    its figures are the first run's bytes."""
    out = tmp_path / "run"
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "-B", "200", "-q", "-o", str(out)]
    for _ in range(2):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code in (0, None)
        if _ == 0:
            assert draws, "the first run drew its figures"
            n_first = len(draws)
            figures = {p.name: p.read_bytes() for p in (out / "figures").iterdir()}
    assert len(draws) == n_first
    assert {p.name: p.read_bytes() for p in (out / "figures").iterdir()} == figures
