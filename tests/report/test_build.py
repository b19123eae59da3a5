"""Building a report from a run directory: detection of result kinds, files written, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.errors import UserError
from attune_judge.report import Paragraph, Section, write_report
from tests.conftest import SAMPLES
from tests.report._rundir import JUDGE_ID, make_run_dir


def _contents(run: Path) -> str:
    """The overview's list of the result kinds the report found in the summary."""
    md = write_report(run)[0].read_text("utf-8")
    (line,) = [x for x in md.splitlines() if x.startswith("- **contents**: ")]
    return line.removeprefix("- **contents**: ")


def test_the_overview_lists_known_result_kinds_in_report_order(tmp_path: Path) -> None:
    # the report order is the registry's (the judges' scores, then the study); "run" and
    # "kind" are no result kinds
    run = make_run_dir(tmp_path / "study", kinds=("judges", "sensitivity"))
    assert _contents(run) == "judges, sensitivity"
    empty = {"run": {"n_tasks": 0, "n_by_status": {}, "complete": True}, "judges": {}}
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "summary.json").write_text(json.dumps(empty))
    assert _contents(tmp_path / "empty") == "none"  # an empty block is no result


def test_a_judge_without_a_stored_leaderboard_shows_its_means_and_computes_nothing(
    tmp_path: Path,
) -> None:
    run = make_run_dir(tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    del summary["judges"][JUDGE_ID]["leaderboard"]  # as for a run of one conversation
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "judgments.jsonl").unlink()  # nothing to recompute from, and nothing is
    md = write_report(run)[0].read_text("utf-8").replace("**", "")
    # means by hand: alpha 6.4 / 8, beta 1.8 / 7 (the parse_error is not scored)
    assert "| 1 | alpha | 0.800 | — |" in md and r"| 2 | &lt;b>beta\|&lt;/b> | 0.257 | — |" in md
    assert "No confidence sets for ranks were computed for this run." in md


def test_a_leaderboard_of_another_shape_is_refused_in_one_line(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    summary["judges"][JUDGE_ID]["leaderboard"] = [
        {"model": "alpha", "mean": 0.8, "lower": 0.7, "upper": 0.9, "rank_set": [1, 2]},
    ]
    (run / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(UserError, match=f"field judges.{JUDGE_ID}.leaderboard"):
        write_report(run)


def test_write_report_writes_markdown_html_and_figures(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    md_path, html_path = write_report(run)
    assert (md_path, html_path) == (run / "report.md", run / "report.html")
    names = sorted(p.name for p in (run / "figures").iterdir())
    assert names == [
        f"{JUDGE_ID}-failures-status.png",
        f"{JUDGE_ID}-leaderboard-forest.png",
    ]  # no rank-set figure: 4 conversations are too few for rank claims (issue 17)


def test_commands_can_write_their_own_sections(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    md_path, _ = write_report(run, [Section("Custom", [Paragraph("hello")])], title="Mine")
    md = md_path.read_text("utf-8")
    assert md.startswith("# Mine\n")
    # the manifest is appended because the directory has one
    assert "## Custom" in md and "## What ran" in md


def test_incomplete_run_is_flagged(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    summary["run"]["complete"] = False
    (run / "summary.json").write_text(json.dumps(summary))
    md = write_report(run)[0].read_text("utf-8")
    assert "**Warning:** The run is incomplete" in md


def test_unknown_summary_contents_are_refused_and_empty_results_said(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"something": 1}))
    with pytest.raises(UserError, match="not a score summary of schema_version 1"):
        write_report(tmp_path)
    empty = {"run": {"n_tasks": 0, "n_by_status": {}, "complete": True}, "judges": {}}
    (tmp_path / "summary.json").write_text(json.dumps(empty))
    md = write_report(tmp_path)[0].read_text("utf-8")
    assert "holds no results this report knows how to show" in md


def test_a_directory_that_is_not_a_run_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        write_report(tmp_path)
    with pytest.raises(UserError, match="no such run directory"):
        write_report(tmp_path / "nope")
    (tmp_path / "file.json").write_text("{}")
    with pytest.raises(UserError, match="is a file"):
        write_report(tmp_path / "file.json")
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(UserError, match=r"summary\.json: cannot read it as JSON"):
        write_report(tmp_path)
    assert not (tmp_path / "nope").exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "file.json",
        "summary.json",
    ]  # nothing written for a directory that is not a run


def test_cli_report_prints_paths_and_exits_2_on_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run_dir(tmp_path / "run")
    with pytest.raises(SystemExit) as ok:
        main(["report", str(run)])
    assert ok.value.code in (0, None)
    assert capsys.readouterr().out.splitlines() == [
        str(run / "report.md"),
        str(run / "report.html"),
    ]
    with pytest.raises(SystemExit) as bad:
        main(["report", str(tmp_path / "missing")])
    assert bad.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "missing" in err and "Traceback" not in err


def test_report_of_a_real_runner_directory(tmp_path: Path) -> None:
    """The run-directory contract end to end: the runner writes, the report reads.

    The lexical judge scores ROUGE-L against the participant-edited reply, so the
    ``human_edited`` pseudo-model scores exactly 1 on every turn and must rank first.
    """
    from attune_judge.judges import LexicalJudge
    from attune_judge.runner import load_judge_items, plan_tasks, run_tasks

    items = load_judge_items(SAMPLES)
    tasks = plan_tasks(items, [LexicalJudge()])
    run_tasks(
        tmp_path / "run",
        tasks,
        command="score",
        arguments={"data": str(SAMPLES)},
        inputs={},
        data_fingerprint="test",
        B=200,
    )
    md_path, html_path = write_report(tmp_path / "run")
    md = md_path.read_text("utf-8")
    scores = md.split("\n## Scores\n", 1)[1].split("\n## ", 1)[0]
    # ROUGE-L of a reply with itself is exactly 1 on every turn: human_edited is on top; a
    # rank claim (a rank, "ranks first, pinned down") needs at least MIN_CLUSTERS conversations
    from attune_judge.calibration import MIN_CLUSTERS

    n_conv = len({i.conversation_id for i in items})
    rank = "1" if n_conv >= MIN_CLUSTERS else "—"
    first_row = next(line for line in scores.splitlines() if line.startswith(("| 1 |", "| — |")))
    assert first_row.startswith(f"| {rank} | human_edited | 1.000 |")
    pinned = any(line.startswith("human_edited ranks first") for line in scores.splitlines())
    assert pinned == (n_conv >= MIN_CLUSTERS)
    assert html_path.exists()


def test_a_new_report_removes_only_its_own_stale_figures(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run", kinds=("calibration",))
    write_report(run)
    ours = run / "figures" / "calibration-overall-calibration.png"
    assert ours.exists()
    foreign = run / "figures" / "someone-elses.png"
    foreign.write_bytes(b"not ours")
    make_run_dir(run)  # the directory now holds a scoring run's summary
    write_report(run)
    assert not ours.exists()  # the calibration figures are gone with the calibration results
    assert foreign.exists()
    assert (run / "figures" / f"{JUDGE_ID}-leaderboard-forest.png").exists()


def test_a_judge_without_normalised_scores_gets_a_note_not_an_empty_plot(tmp_path: Path) -> None:
    run = make_run_dir(tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    for block in summary["judges"][JUDGE_ID]["models"].values():
        block["score"] = None
    del summary["judges"][JUDGE_ID]["leaderboard"]  # no score: the runner stores none
    (run / "summary.json").write_text(json.dumps(summary))
    # and no judgment has a normalised score either
    (run / "judgments.jsonl").write_text("")
    md = write_report(run)[0].read_text("utf-8")
    assert "No model has a score on the normalised 0–1 scale" in md
    assert "leaderboard-forest" not in md
