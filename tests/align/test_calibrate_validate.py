"""A calibrated judge fitted on a shipped set, then ``validate``: with ``--judge DIR`` only the
head's test split is judged; a plain ``validate`` of the same model prints the shipped head's
calibrated row beside the uncalibrated one (the head's held-out items only)."""

from __future__ import annotations

import json
import math
import statistics
import zlib
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import spearmanr

from attune_judge import shipped_dir
from attune_judge.align import AlignConfig, calibrate_judge, load_aligned_judge
from attune_judge.data import JudgeItem, Rating, read_jsonl, read_judgments, write_jsonl
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.runner import ScoreConfig, run_score
from attune_judge.runs import CalibrateSummary, FittedCheck, ValidateSummary, read_summary
from attune_judge.testing import ScriptedEngine, TokenReply
from attune_judge.validate import VALIDATION_SETS, load_calibration_set, validate_judge
from tests._openai_stub import StubServer
from tests.align._engine import CRITERIA, served

SET = "empathic-communication-epitome"


def by_length(messages: list[dict[str, str]]) -> TokenReply:
    """A distribution over 0..2 that leans up with the prompt's length (deterministic)."""
    text = "\n".join(m["content"] for m in messages)
    lean = (len(text) % 400) / 400 + (zlib.crc32(text.encode()) % 7) / 70
    probs = (0.5 - 0.3 * lean, 0.3, 0.2 + 0.3 * lean)
    return TokenReply("1", ({str(k): math.log(p) for k, p in enumerate(probs)},))


def _served_lm(server: StubServer) -> Any:
    """The ``dspy.LM`` of the model on the loopback server, as the CLI's options build it."""
    return resolve_lm(LMSettings(lm="openai/judge", api_base=server.url, seed=0))


def test_validate_with_the_judge_uses_only_its_test_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with served(by_length, monkeypatch) as (server, model):
        config = AlignConfig(
            labels=SET, out=tmp_path / "cal", lm="openai/judge", method="calibrate", B=100
        )
        res = calibrate_judge(config, lm=_served_lm(server), echo=lambda s: None)
        test_ids = set(res.split.items["test"])
        # validate --judge DIR on the set it was fitted on: the test split only
        argv = ["validate", "--set", SET, "--judge", res.out, *model]
        out = _cli([*argv, "-o", str(tmp_path / "v1"), "--B", "100"], capsys)
    assert f"validating on its {len(test_ids)} held-out (test-split) items only" in out
    summary = json.loads((tmp_path / "v1" / "summary.json").read_text())
    assert summary["validation"]["n_items"] == len(test_ids)
    assert "calibrated" in json.dumps(summary["validation"]["judge_spec"])


def test_a_plain_validate_prints_the_shipped_calibrated_row(tmp_path: Path) -> None:
    # the shipped head of the set, fitted on the embedded model's distributions (`local`),
    # applied to another judge's distributions named as that model: its row beside the raw one,
    # on the head's held-out items only
    head = shipped_dir("calibration") / "heads" / SET
    test_ids = set(json.loads((head / "split.json").read_text())["items"]["test"])
    lm = ScriptedEngine(by_length).lm()
    plain = build_judge(SET, lm, JudgeOptions(score_mode="expected", use_reference=False))
    result = validate_judge(SET, "local", tmp_path / "v2", judge=plain, B=100, report_files=False)
    lines = "\n".join(result.summary)
    assert f"calibrated with the shipped head {SET}" in lines
    assert "baselines beside local (calibrated)" in lines
    data = json.loads((tmp_path / "v2" / "summary.json").read_text())["calibrated"]
    n_cal = data["calibrated"]["dimensions"]["total"]["agreement"]["n"]
    assert n_cal == data["uncalibrated"]["dimensions"]["total"]["agreement"]["n"]
    assert n_cal <= len(test_ids) < result.n_items
    # the calibrated rows' Brier score is the head's distributions', not the raw ones'
    crit = "level_explorations"
    cal_p = data["calibrated"]["dimensions"][crit]["probability_scores"]
    raw_p = data["uncalibrated"]["dimensions"][crit]["probability_scores"]
    assert cal_p["n"] == raw_p["n"] and cal_p["brier"] != raw_p["brier"]
    # the head was fitted on the embedded model: another model's validate shows no such row
    other = validate_judge(
        SET, "openai/another", tmp_path / "v3", judge=plain, limit=10, B=50, report_files=False
    )
    assert not any("shipped head" in line for line in other.summary)
    assert "calibrated" not in json.loads((tmp_path / "v3" / "summary.json").read_text())


def _first_items(root: Path, n: int) -> tuple[Path, Path]:
    """The set's first ``n`` items by id (what ``validate --limit n`` judges) and their experts'
    ratings, as an align labels file: real EPITOME replies and expert levels."""
    spec = VALIDATION_SETS[SET]
    data = shipped_dir("data") / spec.calibration / "items.jsonl"
    items = sorted((i for i in read_jsonl(data, JudgeItem) if spec.items(i)), key=_item_id)[:n]
    ids = {i.item_id for i in items}
    ratings = [r for r in load_calibration_set(spec.calibration) if spec.humans(r)]
    write_jsonl(root / "items.jsonl", items)
    write_jsonl(root / "labels.jsonl", [r for r in ratings if r.item_id in ids])
    return root / "items.jsonl", root / "labels.jsonl"


def _item_id(item: JudgeItem) -> str:
    return item.item_id


def _spearman_by_hand(run: Path, labels: Path, dim: str, keep: set[str]) -> float:
    """Spearman ρ of the judge's score with the experts' per-item median on ``keep``, from the
    files (scipy, not the toolkit's calibration layer)."""
    judged = {j.item_id: j.scores[dim] for j in read_judgments(run / "judgments.jsonl")}
    levels: dict[str, list[float]] = {}
    for r in read_jsonl(labels, Rating):
        if r.dimension == dim and r.item_id in keep:
            levels.setdefault(r.item_id, []).append(float(r.value))  # type: ignore[arg-type]
    ids = sorted(keep)
    rho = spearmanr([judged[i] for i in ids], [statistics.median(levels[i]) for i in ids])[0]
    return float(rho)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from attune_judge.cli import main

    try:
        main(argv)
    except SystemExit as ex:
        assert not ex.code, capsys.readouterr()
    return capsys.readouterr().out


def _assert_held_out(
    check: FittedCheck, run: Path, labels: Path, split: dict[str, set[str]]
) -> None:
    """12 of 20 fitted; every dimension's held-out ρ is scipy's on the 8 held-out items (with an
    interval, or the reason there is none), the overall one scipy's on all 20."""
    assert (check.status, check.n_items, check.n_fitted) == ("overlap", 20, 12)
    rows = {r.dimension: r for r in check.held_out if r.metric == "spearman"}
    assert sorted(rows) == sorted(CRITERIA)
    every = split["train"] | split["dev"] | split["test"]
    for dim, row in rows.items():
        assert row.held_out is not None and row.held_out.n == 8
        by_hand = _spearman_by_hand(run, labels, dim, split["test"])
        assert row.held_out.estimate == pytest.approx(by_hand, abs=1e-12)
        assert row.held_out.lower is not None or row.held_out.n_undefined_replicates
        overall = _spearman_by_hand(run, labels, dim, every)
        assert row.overall.estimate == pytest.approx(overall, abs=1e-12)


def test_a_judge_fitted_on_12_of_20_items_warns_and_shows_the_held_out_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 42 point 5: a calibrated judge fitted on 12 (train + dev) of 20 real EPITOME items,
    # checked against the experts' labels of all 20 by calibrate and validate; before, neither
    # said so (calibrate's check knew only aligned judges) nor gave the held-out figure
    with served(by_length, monkeypatch) as (server, model):
        _fitted_on_12_of_20(tmp_path, capsys, _served_lm(server), model)


def _fitted_on_12_of_20(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lm: Any, model: list[str]
) -> None:
    items, labels = _first_items(tmp_path, 20)
    config = AlignConfig(
        labels=str(labels),
        items=items,
        rubric=SET,
        out=tmp_path / "cal",
        lm="openai/judge",
        method="calibrate",
        B=100,
    )
    res = calibrate_judge(config, lm=lm, echo=lambda s: None)
    split = {part: set(ids) for part, ids in res.split.items.items()}
    held = split["test"]
    assert (len(split["train"] | split["dev"]), len(held)) == (12, 8)
    warning = (
        "12 of the 20 human-labelled items scored are in the train/dev split of the calibrated "
        f"judge {res.out} (it was fitted on them)"
    )

    # calibrate --judge RUN: console, summary.json, report
    run = tmp_path / "run"
    judge = load_aligned_judge(res.out, lm)
    run_score(
        ScoreConfig(data=items, out=run, rubric=str(res.out), lm="openai/judge", quiet=True),
        judges=[judge],
    )
    cal_dir = tmp_path / "calibrate"
    argv = ["calibrate", "--human", str(labels), "--judge", str(run), "-B", "200"]
    out = _cli([*argv, "-o", str(cal_dir)], capsys)
    assert warning in out and "| 8 held-out items |" in out
    summary = read_summary(cal_dir)
    assert isinstance(summary, CalibrateSummary) and summary.fitted_check is not None
    _assert_held_out(summary.fitted_check, run, labels, split)
    report = (cal_dir / "report.md").read_text("utf-8")
    assert warning in report and "### Held-out items only" in report

    # validate --judge DIR on the set's first 20 items (the same ones)
    v_dir = tmp_path / "validate"
    argv = ["validate", "--set", SET, "--judge", res.out, *model]
    out = _cli([*argv, "--limit", "20", "-o", str(v_dir), "-B", "200"], capsys)
    assert warning in out and "| 8 held-out items |" in out
    v_summary = read_summary(v_dir)
    assert isinstance(v_summary, ValidateSummary) and v_summary.fitted_check is not None
    _assert_held_out(v_summary.fitted_check, v_dir / "run", labels, split)
    report = (v_dir / "report.md").read_text("utf-8")
    assert warning in report and "Held-out items only" in report

    # the judgments copied out of their run directory: the check says it was skipped
    copied = tmp_path / "copied.jsonl"
    copied.write_bytes((run / "judgments.jsonl").read_bytes())
    out = _cli(["calibrate", "--human", str(labels), "--judge", str(copied), "-B", "50"], capsys)
    assert "no manifest.json beside copied.jsonl" in out and "was skipped" in out
    assert "train/dev split of the" not in out
    # only two held-out items left: no held-out number, the reason instead
    few = tmp_path / "few.jsonl"
    keep = set(sorted(held)[:2]) | split["train"] | split["dev"]
    write_jsonl(few, [r for r in read_jsonl(labels, Rating) if r.item_id in keep])
    out = _cli(
        ["calibrate", "--human", str(few), "--judge", str(run), "-B", "50", "--json"], capsys
    )
    check = json.loads(out)["fitted_check"]
    assert check["n_fitted"] == 12 and check["held_out"] == []
    assert check["held_out_note"].startswith("too few held-out items for a held-out figure: 2 in")
