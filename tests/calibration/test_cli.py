"""The ``calibrate`` and ``rank`` commands on real files (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, Preference, Rating, write_jsonl


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ex:
        main(argv)
    out = capsys.readouterr()
    return int(ex.value.code or 0), out.out, out.err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    human, judgments = [], []
    for c in range(20):
        for t in range(3):
            item = f"conv{c}:{t}:original"
            truth = rng.normal()
            for h in ("e1", "e2", "e3"):
                v = float(np.clip(np.round(3 + truth + rng.normal(scale=0.7)), 1, 5))
                human.append(
                    Rating(
                        item_id=item,
                        rater=h,
                        rater_group="experts",
                        dimension="empathy",
                        value=v,
                        cluster=f"conv{c}",
                    )
                )
            v = float(np.clip(np.round(3 + truth + rng.normal(scale=0.7)), 1, 5))
            judgments.append(
                Judgment(
                    item_id=item,
                    judge_id="judgeA",
                    conversation_id=f"conv{c}",
                    candidate_model="original",
                    scores={"empathy": v},
                    overall=v,
                    normalized=(v - 1) / 4,
                )
            )
            for m, shift in (("m_good", 0.3), ("m_bad", -0.3)):
                judgments.append(
                    Judgment(
                        item_id=f"conv{c}:{t}:{m}",
                        judge_id="judgeA",
                        conversation_id=f"conv{c}",
                        candidate_model=m,
                        normalized=float(np.clip(0.5 + shift + rng.normal(scale=0.1), 0, 1)),
                        status="ok",
                    )
                )
    judgments.append(
        Judgment(
            item_id="x",
            judge_id="judgeA",
            status="lm_error",
            candidate_model="m_good",
            conversation_id="conv0",
        )
    )
    run = tmp_path / "run"
    write_jsonl(run / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "human.jsonl", human)
    prefs = [
        Preference(
            item_id=f"conv{c}:1:pairwise:general:0",
            option_a="original",
            option_b="human_edited",
            winner="A" if c % 3 else "B",
            text_a="a" * (40 + 13 * c),
            text_b="b" * (60 + 7 * (c % 5)),
            cluster=f"conv{c}",
            metadata={"conversation_id": f"conv{c}", "turn": 1},
        )
        for c in range(20)
    ]
    write_jsonl(tmp_path / "prefs.jsonl", prefs)
    jprefs = [
        p.model_copy(update={"rater": "judge", "winner": "A" if c % 2 else "B"})
        for c, p in enumerate(prefs)
    ]
    write_jsonl(tmp_path / "judge_prefs.jsonl", jprefs)
    (tmp_path / "scores.csv").write_text(
        "model,cluster,score\n"
        + "".join(f"m{k},c{c},{k + rng.normal()}\n" for c in range(15) for k in range(3))
    )
    return {
        "run": run,
        "human": tmp_path / "human.jsonl",
        "prefs": tmp_path / "prefs.jsonl",
        "judge_prefs": tmp_path / "judge_prefs.jsonl",
        "scores": tmp_path / "scores.csv",
        "tmp": tmp_path,
    }


def test_calibrate_ratings_against_a_run_dir(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    out_md = files["tmp"] / "report.md"
    code, out, _ = _run(
        [
            "calibrate",
            "--human",
            str(files["human"]),
            "--judge",
            str(files["run"]),
            "--B",
            "200",
            "--output",
            str(out_md),
        ],
        capsys,
    )
    assert code == 0
    assert "Dimension `empathy`" in out and "| spearman |" in out
    assert "alternative annotator test" in out
    assert out_md.read_text() == out
    code, out, _ = _run(
        [
            "calibrate",
            "--human",
            str(files["human"]),
            "--judge",
            str(files["run"]),
            "--B",
            "100",
            "--json",
            "--level",
            "ordinal",
            "--scale",
            "1,2,3,4,5",
        ],
        capsys,
    )
    data = json.loads(out)
    dim = data["dimensions"][0]
    assert dim["join"]["matched"] == 60 and dim["level"] == "ordinal"
    assert dim["aggregate"] == "median"  # of three integer ratings: stays on the scale
    assert dim["scale"] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert dim["judges"][0]["vs_humans"]["spacing"] == "scale_index"
    assert dim["judges"][0]["judge"] == "judgeA"
    assert dim["judges"][0]["vs_humans"]["metrics"]["pearson"]["B"] == 100


def test_calibrate_preferences(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = _run(
        [
            "calibrate",
            "--human",
            str(files["prefs"]),
            "--judge",
            str(files["judge_prefs"]),
            "--B",
            "100",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    full = json.loads(out)
    assert full["length_effect"]["n"] == 20
    data = full["agreement"]
    # participants chose A when c % 3 != 0, the judge when c is odd (c = 0..19):
    # both A: odd and not a multiple of 3 → 1, 5, 7, 11, 13, 17, 19 (7);
    # both B: even multiples of 3 → 0, 6, 12, 18 (4); agreement 11/20
    assert data["overall"]["estimate"] == pytest.approx(11 / 20)
    assert data["tie_policy"] == "strict"


def test_rank_from_run_dir_and_csv(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = _run(["rank", str(files["run"]), "--B", "500", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["rows"][0]["model"] == "m_good"
    assert data["rows"][0]["rank_set_simultaneous"] == [1, 1]
    code, out, _ = _run(["rank", str(files["scores"]), "--B", "300"], capsys)
    assert code == 0 and "| 1 | m2 |" in out


def test_user_errors_exit_two_without_traceback(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    code, _, err = _run(["rank", str(files["tmp"] / "missing.jsonl")], capsys)
    assert code == 2 and "file not found" in err
    code, _, err = _run(
        [
            "calibrate",
            "--human",
            str(files["human"]),
            "--judge",
            str(files["run"]),
            "--measurement",
            "cardinal",
        ],
        capsys,
    )
    assert code == 2 and "--measurement must be nominal, ordinal, interval or ratio" in err
    bad = files["tmp"] / "bad.jsonl"
    bad.write_text('{"foo": 1}\n')
    code, _, err = _run(["rank", str(bad)], capsys)
    assert code == 2 and "record type" in err and "Traceback" not in err


def test_calibrate_preferences_against_pairwise_judgments(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    # four conversations: the judge says A in both orders (order_ba = B in swapped labels) for
    # conv0..conv2 and flips in conv3 (A in both calls → inconsistent, counted as a tie)
    js = []
    for c in range(4):
        flip = c == 3
        js.append(
            Judgment(
                item_id=f"conv{c}:1:pairwise:general:0",
                judge_id="pw",
                conversation_id=f"conv{c}",
                verdict="inconsistent" if flip else "A",
                details={"order_ab": "A", "order_ba": "A" if flip else "B"},
            )
        )
    run = files["tmp"] / "pwrun"
    write_jsonl(run / "judgments.jsonl", js)
    code, out, _ = _run(
        ["calibrate", "--human", str(files["prefs"]), "--judge", str(run), "--B", "100", "--json"],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    # humans: conv0 → B (0 % 3 == 0), conv1..conv3 → A; judge A, A, A, tie
    # strict agreement: conv1, conv2 → 2 of 4
    assert data["agreement"]["overall"]["estimate"] == pytest.approx(0.5)
    assert data["position_bias"]["flip_rate"]["estimate"] == pytest.approx(0.25)
    assert data["position_bias"]["n_pairs"] == 4


def test_calibrate_preferences_writes_a_run_dir(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    out = files["tmp"] / "prefrun"
    argv = ["calibrate", "--human", str(files["prefs"]), "--judge", str(files["judge_prefs"])]
    code, _, err = _run([*argv, "--B", "100", "-o", str(out)], capsys)
    assert code == 0 and f"report: {out / 'report.md'}" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "calibration"
    part = summary["calibration"]
    # participants chose A when c % 3 != 0, the judge when c is odd (c = 0..19):
    # A/A: 1 5 7 11 13 17 19 (7); A/B: 2 4 8 10 14 16 (6); B/A: 3 9 15 (3); B/B: 0 6 12 18 (4)
    assert part["confusion"]["categories"] == ["A", "B"]
    assert part["confusion"]["counts"] == [[7, 6], [3, 4]]
    assert part["metrics"]["agreement (overall)"]["estimate"] == pytest.approx(11 / 20)
    md = (out / "report.md").read_text()
    assert "# attune-judge calibrate report" in md and "## What ran" in md
    assert "Judge vs human labels" in md
    assert (out / "figures" / "calibration-overall-confusion.png").stat().st_size > 0


def test_calibrate_out_refuses_another_commands_run(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["calibrate", "--human", str(files["human"]), "--judge", str(files["run"])]
    code, _, err = _run([*argv, "--B", "50", "-o", str(files["run"])], capsys)
    assert code == 2 and "another command's run" in err and "Traceback" not in err
    code, _, err = _run([*argv, "--B", "50", "-o", str(files["human"])], capsys)
    assert code == 2 and "must be a directory" in err
    # the former meaning of -o (a Markdown file) is caught before a directory is created
    code, _, err = _run([*argv, "--B", "50", "-o", str(files["tmp"] / "new.md")], capsys)
    assert code == 2 and "use --output" in err and not (files["tmp"] / "new.md").exists()


def test_calibrate_reads_a_validate_folders_run(files: dict[str, Path], capsys) -> None:  # type: ignore[no-untyped-def]
    """``validate -o DIR`` keeps its judgments in DIR/run: ``--judge DIR`` reads them."""
    folder = files["tmp"] / "validated"
    folder.mkdir()
    files["run"].rename(folder / "run")
    code, out, err = _run(
        ["calibrate", "--human", str(files["human"]), "--judge", str(folder), "-B", "100"],
        capsys,
    )
    assert code == 0, err
    assert "Dimension `empathy`" in out
    empty = files["tmp"] / "empty"
    empty.mkdir()
    code, _, err = _run(
        ["calibrate", "--human", str(files["human"]), "--judge", str(empty)], capsys
    )
    assert code == 2 and "a validate -o folder has it in run/" in err
