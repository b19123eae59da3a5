"""``rank RUN --human LABELS --method rogan-gladen``: corrected pass rates from the CLI,
checked against the formula written out on the same files."""

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


def _files(tmp_path: Path, judge_value: float = 1.0) -> tuple[Path, Path, list, list]:
    rng = np.random.default_rng(8)
    judgments, ratings, rows = [], [], []
    for c in range(40):
        for m, theta in (("a", 0.8), ("b", 0.4)):
            for t in range(3):
                y = int(rng.random() < theta)
                f = int(rng.random() < (0.9 if y else 0.2))  # a lenient judge
                item = f"c{c}:{m}:{t}"
                v = float(f) * judge_value
                judgments.append(
                    Judgment(
                        item_id=item,
                        judge_id="J",
                        conversation_id=f"c{c}",
                        candidate_model=m,
                        overall=v,
                        normalized=v,
                    )
                )
                label = float(y)
                if c < 20:
                    ratings.append(Rating(item_id=item, rater="p", value=label, cluster=f"c{c}"))
                rows.append((m, f, y if c < 20 else None))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_jsonl(run_dir / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "human.jsonl", ratings)
    return run_dir, tmp_path / "human.jsonl", rows, ratings


def test_rank_human_rogan_gladen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir, human, rows, _ = _files(tmp_path)
    argv = ["rank", str(run_dir), "--human", str(human), "--method", "rogan-gladen"]
    code, out, err = _run([*argv, "--json", "--B", "300"], capsys)
    assert code == 0, err
    data = json.loads(out)
    lab = [(f, y) for _, f, y in rows if y is not None]
    tpr = sum(f for f, y in lab if y == 1) / sum(y == 1 for _, y in lab)
    tnr = sum(1 - f for f, y in lab if y == 0) / sum(y == 0 for _, y in lab)
    for r in data["rows"]:
        fs = [f for m, f, _ in rows if m == r["model"]]
        p = sum(fs) / len(fs)
        expected = min(1.0, max(0.0, (p + tnr - 1) / (tpr + tnr - 1)))
        assert r["corrected"]["estimate"] == pytest.approx(expected, abs=1e-12)
        assert r["ppi"]["estimate"] is not None
        assert r["corrected"]["lower"] < r["corrected"]["upper"]
    assert data["judge"]["tpr"]["estimate"] == pytest.approx(tpr)
    code, out, _ = _run(argv, capsys)
    assert code == 0 and "Corrected pass rates" in out and "PPI++" in out


def test_rank_rogan_gladen_refuses_scores_that_are_not_pass_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, human, _, _ = _files(tmp_path, judge_value=0.75)
    code, _, err = _run(
        ["rank", str(run_dir), "--human", str(human), "--method", "rogan-gladen"], capsys
    )
    assert code == 2 and "pass/fail judge scores" in err and "Traceback" not in err
    code, _, err = _run(["rank", str(run_dir), "--human", str(human), "--method", "bogus"], capsys)
    assert code == 2 and "--method must be ppi or rogan-gladen" in err
