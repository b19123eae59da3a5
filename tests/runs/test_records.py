"""Typed run records: real run directories validate against their kind's model and against
the shipped JSON Schema (checked by the independent ``jsonschema`` validator)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from attune_judge.cli import app
from attune_judge.errors import UserError
from attune_judge.runner import FailureBudget, RetryPolicy, RunDir, plan_tasks, run_tasks
from attune_judge.runs import (
    SCHEMA_DIR,
    SCHEMA_VERSION,
    BenchSummary,
    CalibrateSummary,
    CommandManifest,
    ScoreSummary,
    json_schema,
    read_manifest,
    read_summary,
    write_manifest,
    write_schemas,
)
from tests.runner._fakes import FakeJudge, make_items


def _check(path: Path, kind: str) -> dict[str, Any]:
    data = json.loads(path.read_text("utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION
    jsonschema.validate(data, json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text()))
    return data


def test_shipped_schemas_are_the_models_schemas(tmp_path: Path) -> None:
    # regenerate with attune_judge.runs.write_schemas() after changing a model
    made = sorted(p.name for p in write_schemas(tmp_path))
    shipped = sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json"))
    assert shipped == made
    for name in made:
        on_disk = json.loads((SCHEMA_DIR / name).read_text("utf-8"))
        assert on_disk == json_schema(name.removesuffix(".schema.json")), name


def test_a_scoring_run_writes_a_typed_summary_and_manifest(tmp_path: Path) -> None:
    items = make_items(3, 2)
    judge = FakeJudge(
        score=lambda it: 0.5, outcome=lambda it, k: "parse_error" if it.turn == 2 else "ok"
    )
    run_tasks(
        tmp_path / "run",
        plan_tasks(items, [judge]),
        command="test",
        arguments={},
        inputs={"data": "sha256:x"},
        data_fingerprint="sha256:x",
        budget=FailureBudget(max_failure_rate=1.0),
        retry=RetryPolicy(max_retries=0, base_delay_s=0.0),
        B=50,
        fsync_interval_s=None,
    )
    _check(tmp_path / "run" / "summary.json", "score")
    summary = read_summary(tmp_path / "run")
    assert isinstance(summary, ScoreSummary) and summary.kind == "score"
    block = summary.judges["fake-judge"].models["a"]
    assert (block.n_planned, block.n_ok, block.n_by_status["parse_error"]) == (6, 3, 3)
    assert block.score is not None and block.score.mean == pytest.approx(0.5)
    assert block.score.n_conversations == 3
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    jsonschema.validate(manifest, json_schema("manifest"))


def test_a_calibration_run_writes_a_typed_summary(tmp_path: Path) -> None:
    from attune_judge import calibration as cal
    from attune_judge.data import Rating
    from attune_judge.report import write_calibration_run

    human = [
        Rating(item_id=f"i{k}", rater=r, dimension="d", value=float((k + s) % 3 + 1))
        for k in range(8)
        for r, s in (("h1", 0), ("h2", k % 2))
    ]
    judge = [
        Rating(item_id=f"i{k}", rater="j", dimension="d", value=float(k % 3 + 1)) for k in range(8)
    ]
    write_calibration_run(tmp_path / "cal", cal.calibrate(human, judge, B=20, seed=0))
    _check(tmp_path / "cal" / "summary.json", "calibration")
    summary = read_summary(tmp_path / "cal")
    assert isinstance(summary, CalibrateSummary)
    assert summary.calibration.report is not None
    assert summary.calibration.report.dimensions[0].dimension == "d"


def test_a_manifest_reads_typed_and_a_damaged_one_names_its_file_and_field(
    tmp_path: Path,
) -> None:
    assert read_manifest(tmp_path) is None
    given = CommandManifest(
        command="calibrate", arguments={"B": 20}, versions={"attune-judge": "0"}
    )
    write_manifest(tmp_path, given)
    assert read_manifest(tmp_path) == given
    assert read_manifest(tmp_path / "manifest.json") == given  # the file itself
    # a run of judges cannot resume in another command's directory
    with pytest.raises(UserError, match="holds a calibrate run, not a run of judges"):
        RunDir(tmp_path).read_manifest()
    file = tmp_path / "manifest.json"
    for text, says in [
        ('{"command": "x", "arguments": {}, "versions": {}, "surprise": 1}', "field surprise"),
        ('{"command": "x", "arguments": [], "versions": {}}', "field arguments"),
        ('{"command": "x", "arguments": {}, "versions": {}, "judges": {}}', "field "),
        ("[1]", "expected a JSON object"),
        ("{", "cannot read it as JSON"),
    ]:
        file.write_text(text, "utf-8")
        with pytest.raises(UserError, match=rf"^{re.escape(str(file))}: .*{says}"):
            read_manifest(tmp_path)


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), "utf-8")
    return path


def test_a_summary_missing_its_kind_block_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"

    def refusal(data: dict[str, Any]) -> str:
        with pytest.raises(UserError) as err:
            read_summary(_write(path, data))
        assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)
        return str(err.value)

    run = {"n_tasks": 0, "n_by_status": {}, "complete": True}
    assert "not a bench summary of schema_version 1 (field bench" in refusal(
        {"kind": "bench", "run": run}
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"kind": "bench", "run": {}}, json_schema("bench"))
    # an unknown kind, and an unknown key, are refused (a new field is declared in runs/)
    assert "unknown summary kind 'nope'; known: score" in refusal({"kind": "nope"})
    assert read_summary(_write(path, {"kind": "calibration", "calibration": {}})) is not None
    assert "(field surprise" in refusal({"kind": "calibration", "calibration": {}, "surprise": 1})


def test_schema_command_prints_a_schema_and_names_unknown_kinds() -> None:
    res = CliRunner().invoke(app, ["schema", "score"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["properties"]["judges"]["type"] == "object"
    with pytest.raises(UserError, match="known: manifest, score"):
        json_schema("nope")


def test_a_bench_summary_from_before_the_typed_block_still_loads(tmp_path: Path) -> None:
    # the analysis then stored a model without scored units as an unnamed undefined metric
    undefined = {"estimate": None, "undefined_reason": "no scored units"}
    bench = {
        "bootstrap": {
            "B": 10,
            "seed": 0,
            "level": 0.95,
            "scheme": "multinomial",
            "n_conversations": 2,
            "note": "one draw",
        },
        "models": ["a"],
        "tasks": {
            "emotion": {
                "primary_metric": "f1",
                "units_by_status": {"a": {"lm_error": 2}},
                "metrics": {"f1": {"higher_is_better": True, "models": {"a": undefined}}},
            }
        },
    }
    run = {"n_tasks": 2, "n_by_status": {"lm_error": 2}, "complete": True}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"kind": "bench", "run": run, "bench": bench}), "utf-8")
    summary = read_summary(path)
    assert isinstance(summary, BenchSummary)
    metric = summary.bench.tasks["emotion"].metrics["f1"].models["a"]
    assert metric.estimate is None and metric.undefined_reason == "no scored units"
