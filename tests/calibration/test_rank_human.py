"""``attune-judge rank RUN --human LABELS``: the prediction-powered leaderboard (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, Rating, write_jsonl


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as ex:
        code = int(ex.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(4)
    judgments, ratings = [], []
    for c in range(40):
        u = rng.normal(0, 0.5)
        for m, mu in (("good", 4.0), ("poor", 3.0)):
            y = mu + u + rng.normal(0, 0.5)
            f = float(np.clip(y + 0.8 + rng.normal(0, 0.3), 1, 5))  # an optimistic judge
            item = f"c{c}:{m}"
            judgments.append(
                Judgment(
                    item_id=item,
                    judge_id="J",
                    conversation_id=f"c{c}",
                    candidate_model=m,
                    overall=f,
                    normalized=(f - 1) / 4,
                )
            )
            if c < 15:
                ratings.append(Rating(item_id=item, rater="p", value=float(y), cluster=f"c{c}"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_jsonl(run_dir / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "human.jsonl", ratings)
    return run_dir, tmp_path / "human.jsonl"


def test_rank_human_prints_three_columns_and_writes_a_report(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, human = run
    code, out, err = _run(
        [
            "rank",
            str(run_dir),
            "--human",
            str(human),
            "--field",
            "overall",
            "--json",
            "--report",
            str(tmp_path / "rep"),
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out)
    rows = {r["model"]: r for r in data["rows"]}
    assert list(rows) == ["good", "poor"]
    # the judge is optimistic by 0.8; PPI removes it, the judge-only mean keeps it
    judge_gap = rows["good"]["judge_only"]["estimate"] - rows["good"]["human_only"]["estimate"]
    assert judge_gap > 0.5
    assert abs(rows["good"]["ppi"]["estimate"] - 4.0) < 0.4
    assert rows["good"]["n_labelled"] == 15 and rows["good"]["n_unlabelled"] == 25
    assert rows["good"]["ess_gain"] > 1.3
    assert data["differences"][0]["distinguishable"] is True
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Prediction-powered leaderboard" in md and "ppi-leaderboard" in md
    assert (tmp_path / "rep" / "figures").is_dir()


def test_rank_human_markdown_and_bad_input(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, human = run
    code, out, _ = _run(
        ["rank", str(run_dir), "--human", str(human), "--human-scale", "1,5"], capsys
    )
    assert code == 0
    assert "| 1 | good |" in out and "ESS gain" in out
    code, _, err = _run(
        ["rank", str(run_dir), "--human", str(human), "--human-scale", "5,1"], capsys
    )
    assert code == 2 and "--human-scale" in err
    code, _, err = _run(
        ["rank", str(run_dir), "--human", str(human), "--dimension", "warmth"], capsys
    )
    assert code == 2 and "warmth" in err
    code, _, err = _run(
        ["rank", str(run_dir), "--human", str(human), "--human-raters", "nobody"], capsys
    )
    assert code == 2 and "nobody" in err
    code, out, _ = _run(
        ["rank", str(run_dir), "--human", str(human), "--human-raters", "p", "--json"], capsys
    )
    assert code == 0 and json.loads(out)["rows"][0]["n_labelled"] == 15
    other = tmp_path / "other.jsonl"
    write_jsonl(other, [Rating(item_id="zzz", rater="p", value=1.0)])
    code, _, err = _run(["rank", str(run_dir), "--human", str(other)], capsys)
    assert code == 2 and "no human-labelled item" in err


def test_few_labelled_conversations_warn_in_markdown_json_and_report(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, human = run
    few = tmp_path / "few.jsonl"
    lines = human.read_text("utf-8").splitlines()
    keep = [ln for ln in lines if json.loads(ln)["cluster"] in {f"c{c}" for c in range(5)}]
    few.write_text("\n".join(keep) + "\n", "utf-8")
    code, out, err = _run(["rank", str(run_dir), "--human", str(few)], capsys)
    assert code == 0, err
    assert "> **Warning:** only 5 human-labelled conversations" in out
    code, out, err = _run(
        ["rank", str(run_dir), "--human", str(few), "--json", "--report", str(tmp_path / "r")],
        capsys,
    )
    data = json.loads(out)
    assert code == 0 and not data["rank_claims"] and data["n_labelled_clusters"] == 5
    assert not any(d["distinguishable"] for d in data["differences"])
    assert "only 5 human-labelled conversations" in (tmp_path / "r" / "report.md").read_text()


@pytest.mark.parametrize("bad", [99.0, -5.0])
def test_rank_human_refuses_off_scale_labels(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: float
) -> None:
    run_dir, human = run
    lines = human.read_text("utf-8").splitlines()
    record = json.loads(lines[3])
    lines[3] = json.dumps({**record, "value": bad})
    human.write_text("\n".join(lines) + "\n", "utf-8")
    argv = ["rank", str(run_dir), "--human", str(human)]
    code, out, err = _run([*argv, "--human-scale", "1,5"], capsys)
    assert code == 2 and out == ""
    assert f"{human}:4: field value: {bad:g} is off the declared scale 1–5" in err
    assert "--human-scale" in err and "Traceback" not in err
