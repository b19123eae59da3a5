"""Judge ids are cache and resume keys: a refactor of how specs are built or typed must leave
every id byte-identical. The ids below are regression pins computed with the pre-refactor code
(main at 865b3bc, before ``LMSettings``/``JudgeOptions`` and the typed ``JudgeSpec`` of issue
45), one per spec shape: the baselines, each DSPy judge kind, judge options, a model on an
OpenAI-compatible server (``api_base`` in the spec, credentials redacted), juries (nested too),
the bench's evaluators (with the drafting judges' specs inside) and a changed program state.
"""

from __future__ import annotations

import os

import dspy
import pytest

from attune_judge.judges import Judge, JudgeOptions, Jury, build_judge
from attune_judge.lm import LMSettings, resolve_lm
from attune_judge.tasks._evaluators import TaskEvaluator  # private: no public door builds one
from attune_judge.testing import ScriptedEngine

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


def _ids(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("OPENAI_API_KEY", os.environ.get("OPENAI_API_KEY") or "sk-test")
    engine = ScriptedEngine(["{}"])
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
    draft, behaviour = judges["reference"], judges["behaviours"]
    model = engine.lm("openai/m")
    judges["bench-drafting"] = TaskEvaluator(  # type: ignore[assignment]
        "drafting", "openai/m", model, seed=3, draft_judge=draft, behaviour_judge=behaviour
    )
    judges["bench-preference"] = TaskEvaluator("preference", "openai/m", model, seed=3)  # type: ignore[assignment]
    changed = build_judge("attunebench-reference", lm)
    predictor = next(iter(changed.named_predictors()))[1]  # type: ignore[attr-defined]
    predictor.demos = [dspy.Example(conversation="c", response="r").with_inputs("conversation")]
    changed.refresh_identity()  # type: ignore[attr-defined]
    judges["program-state"] = changed
    return {name: j.judge_id for name, j in judges.items()}


def test_judge_ids_of_every_spec_shape_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _ids(monkeypatch) == PINNED
