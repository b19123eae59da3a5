"""Every run kind, produced on tiny data by the real commands (a loopback OpenAI-compatible
server for the pairwise judge, scripted engines elsewhere): each ``summary.json`` and
``manifest.json`` validates against its shipped JSON Schema with the independent
``jsonschema`` validator, and reading a summary or manifest into its typed model and dumping
it again gives back the file's object unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
import yaml

from attune_judge.cli import main
from attune_judge.data import Judgment, Rating, write_jsonl
from attune_judge.runs import (
    SCHEMA_DIR,
    SCHEMA_VERSION,
    read_manifest,
    read_summary,
    summary_json,
)
from attune_judge.testing import ScriptedEngine
from tests._openai_stub import openai_stub
from tests.conftest import SAMPLES
from tests.judging._stub_judges import longer_wins
from tests.runner._fakes import FakeJudge, make_items


def _schema(kind: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text("utf-8"))


def _check(run: Path, kind: str) -> dict[str, Any]:
    """Validate ``run``'s summary and manifest; return the summary's JSON."""
    data = json.loads((run / "summary.json").read_text("utf-8"))
    assert data["schema_version"] == SCHEMA_VERSION and data["kind"] == kind
    jsonschema.validate(data, _schema(kind))
    record = read_summary(run)
    assert record is not None and record.kind == kind
    assert summary_json(record) == data  # load → dump: the same object
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    jsonschema.validate(manifest, _schema("manifest"))
    typed = read_manifest(run)
    assert typed is not None and typed.model_dump(mode="json") == manifest
    return data


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def test_score(tmp_path: Path) -> None:
    from attune_judge.runner import FailureBudget, RetryPolicy, plan_tasks, run_tasks

    shift = {"a": 0.6, "b": 0.5, "c": 0.2}
    judge = FakeJudge(score=lambda it: shift[it.candidate_model] + 0.05 * (it.turn % 2))
    run_tasks(
        tmp_path / "run",
        plan_tasks(make_items(4, 2, models=("a", "b", "c")), [judge]),
        command="test",
        arguments={},
        inputs={"data": "sha256:x"},
        data_fingerprint="sha256:x",
        budget=FailureBudget(max_failure_rate=1.0),
        retry=RetryPolicy(max_retries=0, base_delay_s=0.0),
        B=50,
        fsync_interval_s=None,
    )
    data = _check(tmp_path / "run", "score")
    block = data["judges"]["fake-judge"]
    # the model blocks carry their leaderboard row's interval: one computation
    rows = {r["model"]: r["score"] for r in block["leaderboard"]["rows"]}
    for model, m in block["models"].items():
        assert (m["score"]["mean"], m["score"]["lower"], m["score"]["upper"]) == (
            rows[model]["estimate"],
            rows[model]["lower"],
            rows[model]["upper"],
        )


def test_pairwise_score_through_a_loopback_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    run = tmp_path / "run"
    with openai_stub(longer_wins) as server:
        argv = ["score", str(SAMPLES), "--rubric", "attunebench-pairwise", "-o", str(run), "-q"]
        assert _cli([*argv, "--lm", "openai/stub", "--api-base", server.url, "--B", "50"]) == 0
    data = _check(run, "score")
    block = next(iter(data["judges"].values()))
    assert block["pairwise"]["n_pairs"] > 0 and "leaderboard" not in block


def test_calibration(tmp_path: Path) -> None:
    from attune_judge import calibration as cal
    from attune_judge.report import write_calibration_run
    from attune_judge.runs import CommandManifest, write_manifest

    human = [
        Rating(item_id=f"i{k}", rater=r, dimension="d", value=float((k + s) % 3 + 1))
        for k in range(8)
        for r, s in (("h1", 0), ("h2", k % 2))
    ]
    judge = [
        Rating(item_id=f"i{k}", rater="j", dimension="d", value=float(k % 3 + 1)) for k in range(8)
    ]
    (tmp_path / "cal").mkdir()
    write_manifest(
        tmp_path / "cal",
        CommandManifest(command="calibrate", arguments={"B": 20}, versions={"attune-judge": "0"}),
    )
    write_calibration_run(
        tmp_path / "cal", cal.calibrate(human, judge, B=20, seed=0), human=human, judge=judge
    )
    _check(tmp_path / "cal", "calibration")


def test_ppi(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    judgments, ratings = [], []
    for c in range(12):
        for m, mu in (("good", 4.0), ("poor", 3.0)):
            y = mu + rng.normal(0, 0.5)
            f = float(np.clip(y + 0.5, 1, 5))
            judgments.append(
                Judgment(
                    item_id=f"c{c}:{m}",
                    judge_id="J",
                    conversation_id=f"c{c}",
                    candidate_model=m,
                    overall=f,
                    normalized=(f - 1) / 4,
                )
            )
            if c < 6:
                ratings.append(
                    Rating(item_id=f"c{c}:{m}", rater="p", value=float(y), cluster=f"c{c}")
                )
    (tmp_path / "run").mkdir()
    write_jsonl(tmp_path / "run" / "judgments.jsonl", judgments)
    write_jsonl(tmp_path / "human.jsonl", ratings)
    argv = ["rank", str(tmp_path / "run"), "--human", str(tmp_path / "human.jsonl")]
    assert _cli([*argv, "--field", "overall", "--B", "50", "--report", str(tmp_path / "rep")]) == 0
    _check(tmp_path / "rep", "ppi")


def test_sensitivity(tmp_path: Path) -> None:
    from attune_judge.sensitivity import SensitivityConfig, run_sensitivity
    from tests.sensitivity._scripted import answer, write_items

    write_items(tmp_path / "items.jsonl", n_conv=3, n_turns=1)
    spec = {
        "name": "tiny",
        "base": {"rubric": "attunebench-reference", "judge": {"reasoning": False}},
        "perturbations": [{"name": "shuffled", "kind": "shuffle_criteria", "seed": 3}],
        "analysis": {"B": 100, "seed": 1},
    }
    (tmp_path / "variants.yaml").write_text(yaml.safe_dump(spec), "utf-8")
    engine = ScriptedEngine(answer)
    config = SensitivityConfig(
        data=tmp_path / "items.jsonl",
        variants=tmp_path / "variants.yaml",
        out=tmp_path / "run",
        quiet=True,
        fsync=False,
        B=60,  # --bootstrap: overrides the file's 100, and is what the summary records
    )
    run_sensitivity(config, lm_factory=lambda lm: engine.lm())
    data = _check(tmp_path / "run", "sensitivity")
    assert data["sensitivity"]["study"] == "tiny" and data["judges"]
    counts = re.findall(r'"B": (\d+)', json.dumps(data))
    assert data["sensitivity"]["settings"]["B"] == 60 and set(counts) == {"60"}


def test_bench(tmp_path: Path) -> None:
    from attune_judge.tasks import BenchConfig, run_bench
    from tests.tasks._fixtures import judge_engine, model_engine, write_data

    config = BenchConfig(
        data=write_data(tmp_path / "data"),
        models=["alpha", "beta"],
        out=tmp_path / "run",
        B=50,
        max_concurrency=2,
    )
    lms = {"alpha": model_engine(True).lm(), "beta": model_engine(False).lm()}
    run_bench(config, lms=lms, judge_lm=judge_engine().lm())
    data = _check(tmp_path / "run", "bench")
    assert data["bench"]["tasks"] and data["run"]["complete"]


def test_validate_and_demo(tmp_path: Path) -> None:
    from attune_judge.demo import run_demo
    from attune_judge.validate import validate_judge
    from tests.adapters.test_demo import _CopyExpert1, load_calibration_set

    ratings = load_calibration_set("empathic-communication")
    validate_judge(
        "empathic-communication-epitome",
        "copy",
        tmp_path / "v",
        limit=12,
        B=50,
        judge=_CopyExpert1(ratings),
    )
    data = json.loads((tmp_path / "v" / "summary.json").read_text("utf-8"))
    jsonschema.validate(data, _schema("validate"))
    record = read_summary(tmp_path / "v")
    assert record is not None and summary_json(record) == data
    _check(tmp_path / "v" / "run", "score")  # the judge run inside it
    run_demo(tmp_path / "demo", B=50, parts=("b",))
    data = json.loads((tmp_path / "demo" / "summary.json").read_text("utf-8"))
    jsonschema.validate(data, _schema("demo"))
    record = read_summary(tmp_path / "demo")
    assert record is not None and summary_json(record) == data and data["duo"]


def test_align(tmp_path: Path) -> None:
    from attune_judge.align import AlignConfig, OptimizerSettings, align_judge
    from tests.align._engine import learner, write_labels

    items, ratings = write_labels(tmp_path)
    config = AlignConfig(
        labels=str(ratings),
        items=items,
        rubric="empathic-communication-epitome",
        out=tmp_path / "aligned",
        optimizer=OptimizerSettings(name="labeled-fewshot", max_labeled_demos=4),
        B=50,
        lm="scripted/judge",
    )
    align_judge(config, lm=ScriptedEngine(learner).lm(), echo=lambda s: None)
    data = _check(tmp_path / "aligned", "align")
    assert data["align"]["proof"]["after"]["estimate"] is not None
