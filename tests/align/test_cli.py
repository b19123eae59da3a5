"""``attune-judge align``, then ``score --judge``, ``judge --judge`` and ``validate --judge`` on
the artifact (in-process; the judge model is the scripted learner behind an OpenAI-compatible
server on loopback)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from tests._openai_stub import StubServer
from tests.align._engine import learner, served, write_labels


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as ex:
        code = int(ex.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[StubServer, list[str]]]:
    """The learner on loopback and the --lm/--api-base options naming it."""
    with served(learner, monkeypatch) as found:
        yield found


def test_align_then_score_and_judge_with_the_artifact(
    tmp_path: Path, model: tuple[StubServer, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    lm = model[1]
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
            *lm,
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
            *lm,
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
            *lm,
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
            *lm,
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
        # score seeds the model with its run seed (0 by default), judge only when asked to:
        # with the same seed the two commands build one judge
        ["judge", str(item), "--judge", str(art), *lm, "--seed", "0"],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out)["judge_id"] == js[0].judge_id
    # the README's last workflow step: `attune-judge report ARTIFACT`
    code, out, err = _run(["report", str(art)], capsys)
    assert code == 0, err
    assert (art / "report.md").read_text("utf-8").strip()


def test_align_bad_input_exits_two(
    tmp_path: Path, model: tuple[StubServer, list[str]], capsys: pytest.CaptureFixture[str]
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
    assert model[0].requests == []


def test_validate_with_an_artifact_aligned_on_the_same_set_uses_only_its_test_split(
    tmp_path: Path, model: tuple[StubServer, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    lm = model[1]
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
            *lm,
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
            *lm,
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
