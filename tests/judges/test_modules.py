"""Judges are ``dspy.Module``s: DSPy's predictor listing, save / load, deep copies and
module calls work on them, and a judge's id follows its programs (unchanged as built)."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from attune_judge.data import JudgeItem, JudgeSpec
from attune_judge.judges import JUDGE_KINDS, JudgeOptions, Jury, build_judge
from attune_judge.lm import lm_spec
from attune_judge.rubrics import load_rubric
from attune_judge.testing import Messages, ScriptedEngine

RUBRIC_OF_KIND = {
    "reference": "attunebench-reference",
    "checklist": "attunebench-checklist",
    "pairwise": "attunebench-pairwise",
    "behaviour": "attunebench-behaviours",
}
GOOD = {
    "overall_score": 3,
    "emotional_appropriateness": 2,
    "helpfulness": 4,
    "tone_match": 3,
    "rationale": "Generic reassurance.",
}
DEMO_MARK = "DEMO-CANDIDATE-7f3a"


class Logged:
    """A responder answering ``reply`` and keeping every request's messages."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[Messages] = []

    def __call__(self, messages: Messages) -> str:
        self.requests.append(messages)
        return self.reply


def _reference(reply: str = json.dumps(GOOD)) -> tuple[dspy.Module, Logged]:
    log = Logged(reply)
    return build_judge("attunebench-reference", ScriptedEngine(log).lm()), log


def _demo() -> dspy.Example:
    return dspy.Example(
        criteria="(criteria)",
        conversation="Person: my cat died",
        candidate_reply=DEMO_MARK,
        reference_reply="I'm so sorry.",
        **GOOD,
    ).with_inputs("criteria", "conversation", "candidate_reply", "reference_reply")


@pytest.mark.parametrize("kind", sorted(RUBRIC_OF_KIND))
def test_every_registry_kind_builds_a_dspy_module(kind: str) -> None:
    assert set(RUBRIC_OF_KIND) == set(JUDGE_KINDS)
    judge = build_judge(RUBRIC_OF_KIND[kind], ScriptedEngine(lambda m: "{}").lm())
    assert isinstance(judge, dspy.Module)


def test_named_predictors_list_each_judges_programs_stably() -> None:
    lm = ScriptedEngine(lambda m: "{}").lm()
    behaviours = load_rubric("attunebench-behaviours")
    every = ",".join(c.id for c in behaviours.criteria)
    expected = {
        "attunebench-reference": ["program"],
        "attunebench-pairwise": ["program"],
        "attunebench-behaviours": [f"programs['{every}']"],
        # one request per criterion, built by hand: no DSPy predictor to list
        "attunebench-checklist": [],
    }
    for rubric, names in expected.items():
        first = [n for n, _ in build_judge(rubric, lm).named_predictors()]
        again = [n for n, _ in build_judge(rubric, lm).named_predictors()]
        assert first == again == names, rubric
    chain = build_judge("attunebench-reference", lm, JudgeOptions(reasoning=True))
    assert [n for n, _ in chain.named_predictors()] == ["program.predict"]


def test_ids_as_built_are_the_spec_hash_of_before(item: JudgeItem) -> None:
    judge, _ = _reference()
    # the spec's layout, written out: program and version, the rubric's and the model's
    # specs, the options
    spec = {
        "program": "reference",
        "program_version": "1",
        "rubric": load_rubric("attunebench-reference").spec(),
        "lm": lm_spec(judge.lm),
        "options": {"use_reference": True, "reasoning": False},
    }
    dumped = judge.spec.model_dump()
    assert dumped == spec and list(dumped) == list(spec)  # the keys given, in their order
    assert judge.judge_id == JudgeSpec.model_validate(spec).judge_id()
    assert judge.spec.program_state is None


def test_save_and_load_restore_the_prompt_with_demos(item: JudgeItem, tmp_path: Path) -> None:
    original, sent_original = _reference()
    plain_id = original.judge_id
    original.program.demos = [_demo()]
    original.save(str(tmp_path / "judge.json"))
    saved = json.loads((tmp_path / "judge.json").read_text())
    assert DEMO_MARK in json.dumps(saved["program"]["demos"])

    loaded, sent_loaded = _reference()
    fresh, sent_fresh = _reference()
    loaded.load(str(tmp_path / "judge.json"))
    for judge in (original, loaded, fresh):
        assert judge.judge(item).status == "ok"
    (asked_original,), (asked_loaded,), (asked_fresh,) = (
        sent_original.requests,
        sent_loaded.requests,
        sent_fresh.requests,
    )
    assert asked_loaded == asked_original
    assert DEMO_MARK in json.dumps(asked_loaded) and DEMO_MARK not in json.dumps(asked_fresh)
    # another prompt, another identity: a loaded judge never shares cached runs with a fresh one
    assert fresh.judge_id == plain_id and loaded.judge_id != plain_id
    assert loaded.spec.program_state is not None
    original.refresh_identity()
    assert original.judge_id == loaded.judge_id
    # DSPy's reset_copy clears the demonstrations: back to the judge as built
    assert loaded.reset_copy().judge_id == plain_id


def test_deepcopy_is_independent_shares_the_lm_and_still_judges(
    item: JudgeItem, caplog: pytest.LogCaptureFixture
) -> None:
    judge, log = _reference()
    judge.program.demos = [_demo()]
    copy = judge.deepcopy()
    assert "Failed to deep copy" not in caplog.text  # our copy, not DSPy's attribute fallback
    assert copy is not judge and copy.program is not judge.program
    assert copy.lm is judge.lm and copy.adapter is judge.adapter and copy.rubric is judge.rubric
    copy.program.demos = []
    assert len(judge.program.demos) == 1
    result = copy.judge(item)
    assert result.status == "ok" and result.scores["helpfulness"] == 4
    assert DEMO_MARK not in json.dumps(log.requests[-1])
    assert judge.judge(item).status == "ok" and DEMO_MARK in json.dumps(log.requests[-1])


def test_module_call_runs_the_judge(item: JudgeItem) -> None:
    judge, _ = _reference()
    assert judge(item).scores["helpfulness"] == 4


def test_behaviour_copy_has_its_own_lock_and_loads_programs_it_had_not_built(
    tmp_path: Path,
) -> None:
    from attune_judge.judges import BehaviourJudge

    item = JudgeItem(
        item_id="c:1:m",
        conversation_id="c",
        context=[{"role": "user", "content": "I lost my job."}],
        candidate="That is hard.",
        candidate_model="m",
        metadata={"behaviour_items": ["B1", "B2"]},
    )
    reply = json.dumps({"B1": "yes", "B2": "no"})
    judge = build_judge("attunebench-behaviours", ScriptedEngine(lambda m: reply).lm())
    assert isinstance(judge, BehaviourJudge)
    assert judge.judge(item).status == "ok"
    names = [n for n, _ in judge.named_predictors()]
    assert "programs['B1,B2']" in names
    copy = judge.deepcopy()
    assert copy._lock is not judge._lock and copy.judge(item).status == "ok"
    judge.save(str(tmp_path / "b.json"))
    fresh = build_judge("attunebench-behaviours", ScriptedEngine(lambda m: reply).lm())
    fresh.load(str(tmp_path / "b.json"))
    assert [n for n, _ in fresh.named_predictors()] == names
    assert fresh.judge_id == judge.judge_id  # nothing learned: the same judge


def test_jury_is_a_module_over_its_members(item: JudgeItem, tmp_path: Path) -> None:
    a, _ = _reference()
    b, _ = _reference(json.dumps({**GOOD, "helpfulness": 2}))
    jury = Jury([a, b])
    assert isinstance(jury, dspy.Module)
    assert [n for n, _ in jury.named_predictors()] == ["members[0].program", "members[1].program"]
    plain = jury.judge_id
    copy = jury.deepcopy()
    assert copy.members[0] is not a and copy.members[0].lm is a.lm
    assert copy.judge(item).scores["helpfulness"] == 3.0  # mean of 4 and 2
    a.program.demos = [_demo()]
    jury.save(str(tmp_path / "jury.json"))
    other = Jury([_reference()[0], _reference()[0]])
    other.load(str(tmp_path / "jury.json"))
    assert other.judge_id != plain and other.members[0].program.demos
    assert not other.members[1].program.demos
