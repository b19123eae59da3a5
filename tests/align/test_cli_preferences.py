"""``attune-judge align PREFS.jsonl --items PAIRS``, then ``score --judge`` with the pairwise
artifact and ``calibrate`` of that run against the same people (in-process; the judge model is
the scripted pairwise learner behind an OpenAI-compatible server on loopback)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from attune_judge.data import Judgment, read_jsonl
from tests._openai_stub import StubServer
from tests.align._engine import served
from tests.align._pair_engine import pair_learner, write_pairs
from tests.align.test_cli import _run


def manifest_judge_id(art: Path, server: StubServer) -> str:
    """The judge id of the artifact with its score map as ``score --judge`` builds it (the
    model on the server, seeded with score's default run seed 0)."""
    from attune_judge.judges import build_judge
    from attune_judge.lm import LMSettings

    settings = LMSettings(lm="openai/judge", api_base=server.url, seed=0)
    return build_judge(str(art), settings).judge_id


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[StubServer, list[str]]]:
    """The pairwise learner on loopback and the --lm/--api-base options naming it."""
    with served(pair_learner, monkeypatch) as found:
        yield found


def test_align_preferences_then_score_and_calibrate_with_the_artifact(
    tmp_path: Path, model: tuple[StubServer, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    pairs, prefs = write_pairs(tmp_path)
    art = tmp_path / "aligned"
    code, out, err = _run(
        [
            "align",
            str(prefs),
            "--items",
            str(pairs),
            "--optimizer",
            "labeled-fewshot",
            "--max-demos",
            "40",
            *model[1],
            "--B",
            "200",
            "-o",
            str(art),
        ],
        capsys,
    )
    assert code == 0, err
    assert "budget estimate" in err and "held-out agreement (exact)" in out
    assert "position only (A always wins)" in out and "length only (longer reply wins)" in out
    assert "opposite winners in the two orders: before" in out
    assert "distinguishable from zero" in out and f"--judge {art}" in out
    manifest = json.loads((art / "aligned-judge.json").read_text())
    assert manifest["rubric"]["id"] == "attunebench-pairwise"
    assert manifest["judge_program"] == "pairwise"
    test_ids = set(json.loads((art / "split.json").read_text())["items"]["test"])
    # score some pairs (held-out ones among them) with the artifact: the pairwise rubric
    # comes from the artifact, and the verdicts are its held-out "after" verdicts
    after = {j.item_id: j.verdict for j in read_jsonl(art / "test-after.jsonl", Judgment)}
    assert set(after) == test_ids
    lines = pairs.read_text().splitlines()
    some = [x for x in lines if json.loads(x)["item_id"] in test_ids][:6] + lines[:6]
    subset = tmp_path / "some-pairs.jsonl"
    subset.write_text("\n".join(dict.fromkeys(some)) + "\n")
    run = tmp_path / "run"
    code, out, err = _run(
        [
            "score",
            str(subset),
            "--judge",
            str(art),
            *model[1],
            "--B",
            "200",
            "-o",
            str(run),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    js = read_jsonl(run / "judgments.jsonl", Judgment)
    assert len(js) == len(set(some)) and all(j.status == "ok" for j in js)
    assert {j.verdict for j in js} <= {"A", "B", "tie"}  # no position-biased flip left
    assert {j.judge_id for j in js} == {manifest_judge_id(art, model[0])}
    assert all(after[j.item_id] == j.verdict for j in js if j.item_id in test_ids)
    assert sum(j.item_id in test_ids for j in js) == 6
    code, out, err = _run(
        [
            "calibrate",
            "--human",
            str(prefs),
            "--judge",
            str(run),
            "--B",
            "200",
            "-o",
            str(tmp_path / "cal"),
        ],
        capsys,
    )
    assert code == 0, err
    assert "length-only" in out and "position-only" in out


def test_align_preferences_bad_input_exits_two(
    tmp_path: Path, model: tuple[StubServer, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    pairs, prefs = write_pairs(tmp_path, conversations=6)
    cases = [
        (["align", str(prefs), "-o", str(tmp_path / "x")], "--items is needed"),
        (
            ["align", str(prefs), "--items", str(pairs), "--metric", "quadratic", "-o", "x"],
            "--metric quadratic does not apply to preferences",
        ),
        (
            [
                "align",
                str(prefs),
                "--items",
                str(pairs),
                "--rubric",
                "duo-dialogue",
                "-o",
                str(tmp_path / "x"),
            ],
            "pairwise rubric",
        ),
        (
            [
                "align",
                str(prefs),
                "--items",
                str(pairs),
                "--optimizer",
                "bootstrap-fewshot",
                "--max-calls",
                "20",
                "-o",
                str(tmp_path / "x"),
            ],
            "exceeds --max-calls 20",
        ),
    ]
    for argv, message in cases:
        code, _, err = _run(argv, capsys)
        assert code == 2, (argv, err)
        assert message in err and "Traceback" not in err
    assert model[0].requests == []
