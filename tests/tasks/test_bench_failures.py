"""Failures are records: counted by status, never scored as zero, not re-run on resume."""

from __future__ import annotations

import json

import pytest

from attune_judge.runs import summary_json
from attune_judge.tasks import BenchConfig, run_bench
from attune_judge.testing import ScriptedEngine
from tests.tasks._fixtures import model_engine, write_data


def test_unparseable_answers_are_parse_errors_and_resume_skips_them(tmp_path):
    data = write_data(tmp_path / "data")
    garbage = ScriptedEngine(lambda messages: "I feel that they feel sad, probably.")
    good = model_engine(True)
    lms = {"garbage": garbage.lm(), "alpha": good.lm()}
    config = BenchConfig(
        data=data,
        models=["alpha", "garbage"],
        out=tmp_path / "run",
        tasks=["emotion"],
        B=200,
        max_failure_rate=1.0,
    )
    result = run_bench(config, lms=lms)
    block = summary_json(result.summary)["bench"]["tasks"]["emotion"]
    assert block["units_by_status"] == {"alpha": {"ok": 2}, "garbage": {"parse_error": 2}}
    # no scored unit -> undefined, not 0
    assert block["metrics"]["f1"]["models"]["garbage"]["estimate"] is None
    assert [r["model"] for r in block["leaderboard"]["rows"]] == ["alpha"]
    lines = (config.out / "records.jsonl").read_text("utf-8").splitlines()
    bad = [r for r in map(json.loads, lines) if r["model"] == "garbage"]
    assert len(bad) == 2 and all(r["status"] == "parse_error" and not r["metrics"] for r in bad)
    calls = garbage.calls
    again = run_bench(config, lms=lms)
    assert again.n_run == 0 and garbage.calls == calls


def test_a_changed_model_list_is_refused_not_mixed(tmp_path):
    from attune_judge.errors import UserError

    data = write_data(tmp_path / "data")
    lms = {"alpha": model_engine(True).lm(), "beta": model_engine(False).lm()}
    base = {"data": data, "out": tmp_path / "run", "tasks": ["emotion"]}
    run_bench(BenchConfig(models=["alpha"], B=200, **base), lms=lms)
    with pytest.raises(UserError, match="different run"):
        run_bench(BenchConfig(models=["alpha", "beta"], B=200, **base), lms=lms)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["models"] == ["alpha"]


def test_one_model_gets_scores_without_rankings_to_compare(tmp_path):
    data = write_data(tmp_path / "data")
    config = BenchConfig(
        data=data,
        models=["alpha"],
        out=tmp_path / "run",
        tasks=["emotion", "preference"],
        B=200,
    )
    result = run_bench(config, lms={"alpha": model_engine(True).lm()})
    b = summary_json(result.summary)["bench"]
    # alpha's preference accuracy 2/3 (see _fixtures.py); one model: τ undefined, no W
    assert b["tasks"]["preference"]["metrics"]["accuracy"]["models"]["alpha"]["estimate"] == (2 / 3)
    assert b["tau_intervals"]["emotion"]["preference"]["estimate"] is None
    assert "kendall_w" not in b
    assert b["tasks"]["emotion"]["discriminability"]["n_model_pairs"] == 0
