"""Bad input to the CLI: exit code 2, no traceback, and a message that names what is wrong.

Each test is one case of the bad-input sweep that failed the project standard before its fix
(a traceback, exit 0, or a message that did not name the path/field/option). Most run the
CLI in-process through ``attune_judge.cli.main`` (the same error mapping as the installed
``attune-judge``); one runs a subprocess from a temporary working directory, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import (
    Judgment,
    attunebench_to_judge_items,
    load_attunebench,
    write_jsonl,
)
from tests.conftest import SAMPLES

ONE_SAMPLE = SAMPLES / "conversation_5.json"


def _fail(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    """Run the CLI expecting exit code 2; return stderr (asserted free of tracebacks)."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert "Traceback" not in err
    return err


def _scores_jsonl(path: Path) -> Path:
    # two models, three conversations: a valid input for `rank`
    rows = [
        {"model": m, "cluster": c, "score": s}
        for m, c, s in [
            ("a", 1, 0.1),
            ("a", 2, 0.5),
            ("a", 3, 0.7),
            ("b", 1, 0.2),
            ("b", 2, 0.4),
            ("b", 3, 0.9),
        ]
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- output paths: general file-system error mapping (cli/_main.py) -----------------------


def test_output_dir_that_is_an_existing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep me", encoding="utf-8")
    err = _fail(capsys, "score", ONE_SAMPLE, "-o", afile, "--rubric", "length", "-q")
    assert f"{afile}: exists and is not a folder" in err
    assert afile.read_text(encoding="utf-8") == "keep me"  # nothing lost


def test_output_path_under_a_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    err = _fail(capsys, "score", ONE_SAMPLE, "-o", afile / "run", "--rubric", "length", "-q")
    assert f"{afile / 'run'}: a part of this path is a file, not a folder" in err


def test_demo_output_dir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    err = _fail(capsys, "demo", "-o", afile, "--parts", "a")
    assert f"{afile}: exists and is not a folder" in err


@pytest.mark.parametrize(
    ("error", "said"),
    [
        # os.replace("out.tmp", "out") onto a folder: the user's path is the target, "out"
        (
            IsADirectoryError(21, "Is a directory", "out.tmp", None, "out"),
            "out: is a folder; expected a file",
        ),
        (PermissionError(13, "Permission denied", "/x/y"), "/x/y: permission denied"),
        (FileExistsError(17, "File exists", "/"), "/: already exists; choose another output path"),
    ],
)
def test_path_error_message_names_the_target_of_a_rename(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    error: OSError,
    said: str,
) -> None:
    """The file-system error of a run (a run directory's file written where it cannot be) is
    one line naming the path; another OS error is not a path problem and is raised."""
    import attune_judge.runner

    def raising(exc: OSError) -> object:
        def run_score(*_: object, **__: object) -> None:
            raise exc

        return run_score

    monkeypatch.setattr(attune_judge.runner, "run_score", raising(error))
    args = ["score", ONE_SAMPLE, "--rubric", "length", "-o", tmp_path / "run", "-q"]
    assert f"error: {said}" in _fail(capsys, *args)
    monkeypatch.setattr(attune_judge.runner, "run_score", raising(OSError(5, "I/O error")))
    with pytest.raises(OSError, match="I/O error"):
        main([str(a) for a in args])


# --- data -----------------------------------------------------------------------------------


def test_data_items_output_is_a_folder_leaves_no_temp_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    err = _fail(capsys, "data", "items", ONE_SAMPLE, "-o", out)
    assert f"{out}: is a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no out.tmp left behind


def test_data_empty_jsonl_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    err = _fail(capsys, "data", "preferences", empty, "-o", tmp_path / "p.jsonl")
    assert f"{empty}: no conversations" in err
    assert not (tmp_path / "p.jsonl").exists()


# --- judge / sensitivity: a folder where a file is expected --------------------------------


def test_judge_item_path_is_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(capsys, "judge", tmp_path, "--rubric", "length")
    assert f"{tmp_path}: is a folder" in err


def test_judge_given_a_jsonl_says_one_item_per_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = attunebench_to_judge_items(load_attunebench(ONE_SAMPLE))[:2]
    path = tmp_path / "items.jsonl"
    write_jsonl(path, items)
    err = _fail(capsys, "judge", path, "--rubric", "length")
    assert f"{path}: not valid JSON" in err
    assert "line 2" in err
    assert "one item per file" in err


def test_sensitivity_variants_is_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _fail(capsys, "sensitivity", ONE_SAMPLE, "--variants", tmp_path, "-o", tmp_path / "r")
    assert f"{tmp_path}: is a folder; expected a variants file" in err


def test_judge_unknown_provider_is_an_error_not_an_lm_error_judgment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    item = tmp_path / "item.json"
    first = attunebench_to_judge_items(load_attunebench(ONE_SAMPLE))[0]
    item.write_text(first.model_dump_json(), encoding="utf-8")
    err = _fail(capsys, "judge", item, "--lm", "nonsense-provider/foo", "--no-cache")
    assert "unknown provider 'nonsense-provider'" in err
    assert "nonsense-provider/foo" in err


# --- rank / calibrate -----------------------------------------------------------------------


def test_rank_given_human_ratings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ratings = tmp_path / "ratings.jsonl"
    rating = {"item_id": "i1", "rater": "p1", "dimension": "d", "value": 3, "cluster": "c1"}
    ratings.write_text(json.dumps(rating) + "\n", encoding="utf-8")
    err = _fail(capsys, "rank", ratings)
    assert f"{ratings}: expected Judgment records" in err
    assert "found rating records" in err


def test_rank_scores_row_missing_a_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "scores.jsonl"
    rows.write_text(
        json.dumps({"model": "a", "cluster": 1, "score": 0.5})
        + "\n"
        + json.dumps({"model": "b", "cluster": 1, "scor": 0.5})
        + "\n",
        encoding="utf-8",
    )
    err = _fail(capsys, "rank", rows)
    assert f"{rows}: row 2: missing field 'score'" in err


@pytest.mark.parametrize("command", ["rank", "calibrate"])
def test_confidence_level_out_of_range(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = _scores_jsonl(tmp_path / "scores.jsonl")
    args = [scores] if command == "rank" else ["--human", scores, "--judge", scores]
    err = _fail(capsys, command, *args, "--ci", "2")
    assert "--ci is a confidence level between 0 and 1" in err


@pytest.mark.parametrize("command", ["rank", "calibrate"])
def test_too_few_bootstrap_replicates(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = _scores_jsonl(tmp_path / "scores.jsonl")
    args = [scores] if command == "rank" else ["--human", scores, "--judge", scores]
    err = _fail(capsys, command, *args, "--B", "0")
    assert "--B" in err


def test_rank_unwritable_output_still_prints_the_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scores = _scores_jsonl(tmp_path / "scores.jsonl")
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        main(["rank", str(scores), "--B", "50", "--json", "-o", str(afile / "board.json")])
    out, err = capsys.readouterr()
    assert info.value.code == 2, err
    assert "Traceback" not in err
    assert f"{afile}: exists and is not a folder" in err
    board = json.loads(out)  # the result was printed before the write failed: nothing lost
    # means by hand: a = (0.1 + 0.5 + 0.7) / 3 = 0.4333, b = (0.2 + 0.4 + 0.9) / 3 = 0.5
    means = {row["model"]: row["score"]["estimate"] for row in board["rows"]}
    assert means == pytest.approx({"a": 1.3 / 3, "b": 0.5})


def test_rank_unknown_judge_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(
        run / "judgments.jsonl",
        [
            Judgment(item_id=f"c{c}:1:m", judge_id="j1", conversation_id=f"c{c}", normalized=0.5)
            for c in range(3)
        ],
    )
    err = _fail(capsys, "rank", run, "--judge-id", "nosuch")
    assert "no judge 'nosuch'" in err
    assert "'j1'" in err


# --- as a user runs it: installed entry point, from a temporary working directory ----------


def test_subprocess_output_under_a_file_exit_2_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "attune_judge", "data", "items", str(ONE_SAMPLE), "-o", "afile/x"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "afile: exists and is not a folder" in proc.stderr  # names the path
