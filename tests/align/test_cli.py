"""``attune-judge align``, then ``score --judge``, ``judge --judge`` and ``validate --judge`` on
the artifact (in-process; the model resolver is patched to the scripted learner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.testing import ScriptedEngine
from tests.align._engine import learner, write_labels


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as ex:
        code = int(ex.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> ScriptedEngine:
    eng = ScriptedEngine(learner)
    lm = eng.lm()

    def resolve(model: Any, **settings: Any) -> Any:
        return lm

    monkeypatch.setattr("attune_judge.judges._factory.resolve_judge_lm", resolve)
    return eng


def test_align_then_score_and_judge_with_the_artifact(
    tmp_path: Path, engine: ScriptedEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    items, ratings = write_labels(tmp_path)
    art = tmp_path / "aligned"
    code, out, err = _run(
        [
            "align",
            str(ratings),
            "--items",
            str(items),
            "--rubric",
            "empathic-communication-epitome",
            "--optimizer",
            "labeled-fewshot",
            "--max-demos",
            "8",
            "--lm",
            "scripted/judge",
            "--B",
            "200",
            "-o",
            str(art),
        ],
        capsys,
    )
    assert code == 0, err
    assert "budget estimate" in err and "held-out agreement" in out
    assert "distinguishable from zero" in out and f"--judge {art}" in out
    manifest = json.loads((art / "aligned-judge.json").read_text())
    assert manifest["optimizer"]["name"] == "labeled-fewshot"
    assert manifest["split"]["seed"] == 0 and manifest["score_map"] is not None
    # score with the artifact: its id differs from the plain rubric's
    code, out, err = _run(
        [
            "score",
            str(items),
            "--judge",
            str(art),
            "--lm",
            "scripted/judge",
            "-o",
            str(tmp_path / "run"),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    js = read_jsonl(tmp_path / "run" / "judgments.jsonl", Judgment)
    assert js and all(j.status == "ok" and "raw_scores" in j.details for j in js)
    code, out, err = _run(
        [
            "score",
            str(items),
            "--rubric",
            "empathic-communication-epitome",
            "--no-reference",  # the items have none (a reference rubric would refuse them)
            "--lm",
            "scripted/judge",
            "-o",
            str(tmp_path / "plain"),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    plain = read_jsonl(tmp_path / "plain" / "judgments.jsonl", Judgment)
    assert {j.judge_id for j in plain}.isdisjoint({j.judge_id for j in js})
    # resuming the aligned run into the plain run's folder is refused, never mixed
    code, out, err = _run(
        [
            "score",
            str(items),
            "--judge",
            str(art),
            "--lm",
            "scripted/judge",
            "-o",
            str(tmp_path / "plain"),
            "-q",
        ],
        capsys,
    )
    assert code == 2
    item = tmp_path / "item.json"
    first = items.read_text().splitlines()[0]
    item.write_text(first)
    code, out, err = _run(
        ["judge", str(item), "--judge", str(art), "--lm", "scripted/judge"], capsys
    )
    assert code == 0, err
    assert json.loads(out)["judge_id"] == js[0].judge_id
    # the README's last workflow step: `attune-judge report ARTIFACT`
    code, out, err = _run(["report", str(art)], capsys)
    assert code == 0, err
    assert (art / "report.md").read_text("utf-8").strip()


def test_align_bad_input_exits_two(
    tmp_path: Path, engine: ScriptedEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    items, ratings = write_labels(tmp_path)
    cases = [
        (["align", "no-such-set", "-o", str(tmp_path / "x")], "neither a label file"),
        (["align", str(ratings), "-o", str(tmp_path / "x")], "--items"),
        (
            [
                "align",
                str(ratings),
                "--items",
                str(items),
                "--rubric",
                "empathic-communication-epitome",
                "--split",
                "1,2",
                "-o",
                str(tmp_path / "x"),
            ],
            "--split",
        ),
        (
            [
                "align",
                str(ratings),
                "--items",
                str(items),
                "--rubric",
                "empathic-communication-epitome",
                "--max-calls",
                "5",
                "-o",
                str(tmp_path / "x"),
            ],
            "exceeds --max-calls",
        ),
        (
            ["score", str(items), "--judge", str(tmp_path), "-o", str(tmp_path / "r")],
            "not an aligned judge",
        ),
    ]
    for argv, message in cases:
        code, _, err = _run(argv, capsys)
        assert code == 2, (argv, err)
        assert message in err and "Traceback" not in err
    assert engine.calls == 0


def test_validate_with_an_artifact_aligned_on_the_same_set_uses_only_its_test_split(
    tmp_path: Path, engine: ScriptedEngine, capsys: pytest.CaptureFixture[str]
) -> None:
    art = tmp_path / "aligned"
    code, out, err = _run(
        [
            "align",
            "empathic-communication-epitome",
            "--optimizer",
            "labeled-fewshot",
            "--limit",
            "8",
            "--B",
            "200",
            "--lm",
            "scripted/judge",
            "-o",
            str(art),
        ],
        capsys,
    )
    assert code == 0, err
    test_ids = set(json.loads((art / "split.json").read_text())["items"]["test"])
    code, out, err = _run(
        [
            "validate",
            "--set",
            "empathic-communication-epitome",
            "--judge",
            str(art),
            "--lm",
            "scripted/judge",
            "--B",
            "100",
            "-o",
            str(tmp_path / "val"),
        ],
        capsys,
    )
    assert code == 0, err
    assert f"validating on its {len(test_ids)} held-out" in out
    judged = read_jsonl(tmp_path / "val" / "run" / "judgments.jsonl", Judgment)
    assert {j.item_id for j in judged} == test_ids
