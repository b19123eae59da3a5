"""Every shipped rubric and variants file with the embedded model (issue 29).

The shipped variants file has a 1-10 scale variant; the embedded model's default score mode
(expected: one token per score) cannot read two-digit levels. Its judge is built scored from
the sampled answer instead (``--score-mode expected`` given explicitly is refused with one
line), so no shipped combination ends in a traceback.

The fast test builds every variant's judge on the embedded model without calling it; the slow
ones run every shipped rubric (``score``, on one item or the first turn of one conversation)
and every variants file (``sensitivity``, on one item) from the CLI with ``--lm local``, one
test per file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import write_jsonl
from attune_judge.lm import LMSettings, model_handle, register_model, resolve_lm
from attune_judge.rubrics import load_rubric
from attune_judge.runner import load_judge_items
from attune_judge.runs import read_manifest
from attune_judge.sensitivity import (
    SensitivityConfig,
    load_variants,
    resolve_variants,
    run_sensitivity,
)
from attune_judge.testing import ScriptedEngine, TokenReply
from tests.conftest import REPO_ROOT, SAMPLES

VARIANTS = sorted((REPO_ROOT / "rubrics" / "variants").glob("*.yaml"))
RUBRICS = sorted((REPO_ROOT / "rubrics").glob("*.yaml"))


def _cli(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    return 0


def _two_items(tmp_path: Path) -> Path:
    items = load_judge_items(SAMPLES / "conversation_5.json", models=["original"])[:2]
    path = tmp_path / "two.jsonl"
    write_jsonl(path, items)
    return path


def _one_item(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text(_two_items(tmp_path).read_text("utf-8").splitlines()[0] + "\n", "utf-8")
    return path


@pytest.mark.parametrize("variants", VARIANTS, ids=[p.stem for p in VARIANTS])
def test_every_variant_builds_a_judge_on_the_embedded_model(tmp_path: Path, variants: Path) -> None:
    """The study's judges as built for the embedded model: a scripted engine carrying the
    embedded model's handle (in-process log-probabilities, resolved but never loaded) answers
    every request with a one-token score; the judges are read from the run's manifest."""
    embedded = model_handle(resolve_lm(LMSettings(lm="local")))
    assert embedded.prefill
    engine = ScriptedEngine(lambda messages: TokenReply("3", ({"3": -0.7, "4": -0.7},)))
    config = SensitivityConfig(
        data=_two_items(tmp_path),
        variants=variants,
        out=tmp_path / "r",
        lm="local",
        max_failure_rate=1.0,
        max_retries=0,
        B=50,
        quiet=True,
    )
    result = run_sensitivity(config, lm_factory=lambda lm: register_model(engine.lm(), embedded))
    manifest = read_manifest(tmp_path / "r")
    assert manifest is not None
    spec_of = {name: manifest.judges[judge_id] for name, judge_id in result.judge_ids.items()}
    modes = {(spec.options or {}).get("score_mode") for spec in spec_of.values()}
    assert spec_of and "expected" in modes  # the one-digit scales keep the default
    study = load_variants(variants)
    assert study.base.rubric is not None
    wide = [
        v.name
        for v in resolve_variants(study, load_rubric(study.base.rubric), lm="local")
        if v.rubric.scale_of(v.rubric.criteria[0].id).max > 9
    ]
    assert wide and all(spec_of[n].program != "criterion" for n in wide)  # sampled, one call


def test_explicit_expected_on_a_1_10_scale_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rubric = tmp_path / "ten.yaml"
    text = (REPO_ROOT / "rubrics" / "attune-empathy-anchored.yaml").read_text("utf-8")
    rubric.write_text(text.replace("scale: {min: 1, max: 5}", "scale: {min: 1, max: 10}"), "utf-8")
    item = tmp_path / "item.json"
    (first,) = load_judge_items(SAMPLES / "conversation_5.json", models=["original"])[:1]
    item.write_text(first.model_dump_json(), "utf-8")
    assert _cli(["judge", str(item), "--rubric", str(rubric), "--score-mode", "expected"]) == 2
    err = capsys.readouterr().err
    assert "--score-mode sampled" in err and "(1-10)" in err and "Traceback" not in err


def _kind(rubric: Path) -> str:
    return next(
        ln.split(":", 1)[1].strip()
        for ln in rubric.read_text("utf-8").splitlines()
        if ln.startswith("kind:")
    )


FAST = ["--lm", "local", "--max-tokens", "48", "--max-failure-rate", "1", "-q"]
"""The embedded model, short answers; a run whose answers all failed still writes its summary."""


@pytest.fixture
def _one_model_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_LOCAL_THREADS", "1")


def _check_run(outcome: int, out: Path, captured: pytest.CaptureResult[str]) -> None:
    assert "Traceback" not in captured.err + captured.out
    # 0, or 3 when the tiny model's answers all failed to parse: recorded, never a crash
    assert outcome in {0, 3}, (outcome, captured.err[-2000:])
    summary = out / "summary.json"
    assert summary.is_file()
    assert json.loads(summary.read_text("utf-8"))["run"]["n_tasks"] > 0


# its own xdist group (tests/conftest.py): under `make test` these cases run on the other worker
# beside the real-components group, with one model thread so that the two share the cores
@pytest.mark.slow
@pytest.mark.xdist_group("embedded-sweep")
@pytest.mark.usefixtures("_one_model_thread")
@pytest.mark.parametrize("rubric", RUBRICS, ids=[p.stem for p in RUBRICS])
def test_every_shipped_rubric_runs_with_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rubric: Path
) -> None:
    kind = _kind(rubric)
    if kind in ("pairwise", "behaviour"):
        data = tmp_path / "data"
        data.mkdir()
        conversation = json.loads((SAMPLES / "conversation_5.json").read_text("utf-8"))
        conversation["turns"] = conversation["turns"][:1]  # pairwise/behaviour items of one turn
        (data / "conversation_5.json").write_text(json.dumps(conversation), "utf-8")
        source, extra = data, ["--models", "original"]
    else:
        source, extra = _one_item(tmp_path), []
    out = tmp_path / rubric.stem
    argv = ["score", str(source), "--rubric", str(rubric), "-o", str(out), *extra]
    _check_run(_cli([*argv, *FAST]), out, capsys.readouterr())


# its own xdist group (tests/conftest.py): under `make test` these cases run on the other worker
# beside the real-components group, with one model thread so that the two share the cores
@pytest.mark.slow
@pytest.mark.xdist_group("embedded-sweep")
@pytest.mark.usefixtures("_one_model_thread")
@pytest.mark.parametrize("variants", VARIANTS, ids=[p.stem for p in VARIANTS])
def test_every_shipped_variants_file_runs_with_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variants: Path
) -> None:
    out = tmp_path / variants.stem
    # one item: the analysis needs two conversations, which two items of one did not give
    # either ("no analysis"); every variant's judge still runs (the analysis: tests/sensitivity)
    argv = ["sensitivity", str(_one_item(tmp_path)), "--variants", str(variants), "-o", str(out)]
    _check_run(_cli([*argv, *FAST, "--no-report"]), out, capsys.readouterr())
