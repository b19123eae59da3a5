"""``attune-judge score`` end to end on the sample data, with the lexical baseline (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from tests.conftest import SAMPLES


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def test_score_sample_pseudo_models_then_second_run_is_a_no_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert _cli(["score", str(SAMPLES), "--rubric", "lexical", "-o", str(run), "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    (block,) = summary["judges"].values()
    models = block["models"]
    # 19 annotated turns with a human-edited reference, for each of the three pseudo-models
    assert {m: models[m]["n_planned"] for m in models} == dict.fromkeys(
        ("original", "llm_improved", "human_edited"), 19
    )
    # human_edited IS the reference: ROUGE-L F1 of a text with itself is 1 on every item
    assert models["human_edited"]["score"]["mean"] == pytest.approx(1.0)
    assert models["original"]["score"]["mean"] < 1.0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["data_fingerprint"].startswith("sha256:")
    assert manifest["versions"]["dspy"] and manifest["versions"]["python"]
    assert manifest["models"] == ["human_edited", "llm_improved", "original"]
    assert "human_edited" in (run / "report.md").read_text()

    before = (run / "judgments.jsonl").read_bytes()
    capsys.readouterr()
    assert _cli(["score", str(SAMPLES), "--rubric", "lexical", "-o", str(run), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "57 already done, 0 judged now" in out
    assert (run / "judgments.jsonl").read_bytes() == before


def test_another_judge_on_the_same_run_directory_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["score", str(SAMPLES), "-o", str(run), "--quiet", "--models", "original"]
    assert _cli([*argv, "--rubric", "lexical"]) == 0
    assert _cli([*argv, "--rubric", "length"]) == 2
    err = capsys.readouterr().err
    assert "refusing to mix" in err and "judge_ids" in err and "Traceback" not in err


def test_score_in_process_leaves_the_callers_garbage_collector_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gc

    # score turns the cyclic GC off while it imports and sets up (issue 47): a set-up that
    # fails (no DATA) and a run that ends must both give the caller its GC back
    assert gc.isenabled()
    assert _cli(["score", "--rubric", "lexical", "-o", str(tmp_path / "r0")]) == 2
    assert "needs DATA" in capsys.readouterr().err
    assert gc.isenabled()
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "--models", "original", "--quiet"]
    assert _cli([*argv, "-o", str(tmp_path / "r1")]) == 0
    assert gc.isenabled()


def test_unknown_model_without_candidates_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "-o", str(tmp_path / "r")]
    assert _cli([*argv, "--models", "gpt-x", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "'gpt-x'" in err and "candidates" in err


def test_candidates_file_is_scored_in_the_context_of_its_turn(tmp_path: Path) -> None:
    cands = tmp_path / "c.jsonl"
    rows = [
        {"conversation_id": "synthetic-5", "turn": 1, "model": "m1", "response": "hello"},
        {"conversation_id": "synthetic-5", "turn": 1, "model": "m2", "response": "hi there"},
    ]
    cands.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run"
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "-o", str(run), "--quiet"]
    assert _cli([*argv, "--candidates", str(cands)]) == 0
    lines = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    assert sorted(j["item_id"] for j in lines) == ["synthetic-5:1:m1", "synthetic-5:1:m2"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert str(cands) in manifest["inputs"]


def test_candidate_for_a_turn_that_does_not_exist_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cands = tmp_path / "c.jsonl"
    row = {"conversation_id": "synthetic-5", "turn": 99, "model": "m1", "response": "x"}
    cands.write_text(json.dumps(row) + "\n")
    argv = ["score", str(SAMPLES), "--rubric", "lexical", "-o", str(tmp_path / "r"), "--quiet"]
    assert _cli([*argv, "--candidates", str(cands)]) == 2
    err = capsys.readouterr().err
    assert "turn 99" in err and "synthetic-5" in err


def test_interval_cells_by_hand() -> None:
    from attune_judge.calibration import fmt_estimate as interval_cell

    # values by hand: 3 decimals, interval in brackets, an em dash for no value
    assert interval_cell(0.5124, 0.4, 0.62349) == "0.512 [0.400, 0.623]"
    assert interval_cell(0.5, None, None) == "0.500"
    assert interval_cell(None, 0.1, 0.2) == "—"


@pytest.mark.parametrize(
    ("given", "models"),
    [
        (" original,, human_edited ", ["human_edited", "original"]),  # spaces, empty parts
        (",, ", ["human_edited", "llm_improved", "original"]),  # only commas: every model
    ],
)
def test_a_comma_separated_option_drops_spaces_and_empty_parts(
    tmp_path: Path, given: str, models: list[str]
) -> None:
    run = tmp_path / "run"
    argv = ["score", str(SAMPLES / "conversation_5.json"), "--rubric", "lexical", "-o", str(run)]
    assert _cli([*argv, "--quiet", "--models", given]) == 0
    assert json.loads((run / "manifest.json").read_text())["models"] == models
    lines = (run / "judgments.jsonl").read_text().splitlines()
    judged = {json.loads(x)["candidate_model"] for x in lines}
    assert sorted(judged) == models


# A run stopped by its failure budget exits 3 with "error: run stopped: ..." on stderr:
# tests/cli/test_run_messages.py (score against a server answering garbage).
