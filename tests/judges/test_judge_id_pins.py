"""Judge ids are cache and resume keys: a refactor of how specs are built or typed must leave
every id byte-identical. The ids below are regression pins computed with the pre-refactor code
(main at 865b3bc, before ``LMSettings``/``JudgeOptions`` and the typed ``JudgeSpec`` of issue
45), one per spec shape: the baselines, each DSPy judge kind, judge options, a model on an
OpenAI-compatible server (``api_base`` in the spec, credentials redacted), juries (nested too),
the bench's evaluators (with the drafting judges' specs inside) and a changed program state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dspy
import pytest

from attune_judge.judges import Judge, JudgeOptions, Jury, build_judge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.tasks import BenchConfig, run_bench
from attune_judge.testing import ScriptedEngine
from tests.tasks._fixtures import write_data

PINNED = {
    "length": "length-71a7e9eeefabee92",
    "lexical": "lexical-ffe44ac5c0a3b789",
    "lexicon": "lexicon-ce75f5018f580913",
    "reference": "reference-263c889471cc28df",
    "pairwise": "pairwise-322e014a94bbdd50",
    "behaviours": "behaviour-83bdcd05b993ed26",
    "checklist": "criterion-34e527bfd89c3916",
    "reference-reasoning-no-reference": "reference-ab7a42b8ac23ff7b",
    "reference-expected": "criterion-5e7b786aed39d43c",
    "reference-on-server": "reference-0cdc758f47990469",
    "jury": "jury-d3741aa6e9054e49",
    "jury-of-juries": "jury-9df1dd828f036262",
    "bench-drafting": "bench-drafting-d3207883ec224659",
    "bench-preference": "bench-preference-d287971770e373bf",
    "program-state": "reference-1c520c8558f11be2",
}


def _bench_ids(root: Path, task: str, engine: ScriptedEngine) -> list[str]:
    """The judge ids a bench run of one task records in its manifest: model ``openai/m``, seed
    3, the drafting judges (reference and behaviours) on ``scripted/judge``."""
    config = BenchConfig(
        data=write_data(root / "data"),
        models=["openai/m"],
        out=root / task,
        seed=3,
        tasks=[task],  # type: ignore[list-item]
        B=50,
        max_conversations=1,
        max_failure_rate=1.0,  # the model answers "{}": every unit fails, the ids are kept
    )
    run_bench(config, lms={"openai/m": engine.lm("openai/m")}, judge_lm=engine.lm())
    return list(json.loads((root / task / "manifest.json").read_text())["judges"])


def _ids(monkeypatch: pytest.MonkeyPatch, root: Path) -> dict[str, str]:
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY") or "sk-test")
    engine = ScriptedEngine(lambda messages: "{}")
    lm = engine.lm("scripted/judge")
    judges: dict[str, Judge] = {n: build_judge(n) for n in ("length", "lexical", "lexicon")}
    for name, rubric in (
        ("reference", "attunebench-reference"),
        ("pairwise", "attunebench-pairwise"),
        ("behaviours", "attunebench-behaviours"),
        ("checklist", "attunebench-checklist"),
    ):
        judges[name] = build_judge(rubric, lm)
    judges["reference-reasoning-no-reference"] = build_judge(
        "attunebench-reference", lm, JudgeOptions(reasoning=True, use_reference=False)
    )
    judges["reference-expected"] = build_judge(
        "attunebench-reference", lm, JudgeOptions(score_mode="expected")
    )
    served = LMSettings(
        lm="openai/served",
        api_base="http://user:pw@10.0.0.2:8000/v1",
        temperature=0.3,
        seed=7,
        max_tokens=99,
        response_format="json_object",
    )
    judges["reference-on-server"] = build_judge(
        "attunebench-reference", resolve_lm(served, check_connection=False)
    )
    a = build_judge("attunebench-reference", engine.lm("scripted/a"))
    b = build_judge("attunebench-reference", engine.lm("scripted/b"))
    judges["jury"] = Jury([a, b], method="median")
    judges["jury-of-juries"] = Jury([Jury([a, b]), build_judge("lexical")])
    ids = {name: j.judge_id for name, j in judges.items()}
    # the bench's evaluators: the drafting one holds the drafting judges' specs
    (ids["bench-drafting"],) = _bench_ids(root, "drafting", engine)
    (ids["bench-preference"],) = _bench_ids(root, "preference", engine)
    changed = build_judge("attunebench-reference", lm)
    predictor = next(iter(changed.named_predictors()))[1]  # type: ignore[attr-defined]
    predictor.demos = [dspy.Example(conversation="c", response="r").with_inputs("conversation")]
    changed.refresh_identity()  # type: ignore[attr-defined]
    ids["program-state"] = changed.judge_id
    return ids


def test_judge_ids_of_every_spec_shape_are_unchanged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert _ids(monkeypatch, tmp_path) == PINNED
