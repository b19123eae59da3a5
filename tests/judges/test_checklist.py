"""Checklist rubrics: yes/no questions with a polarity, read as P(yes) from scripted logprobs
and aggregated per dimension to the rubric's scale; and the two shipped checklists.

Every number is worked by hand in the comment beside it.
"""

from __future__ import annotations

import math

import pytest

from attune_judge.cli import main
from attune_judge.data import JudgeItem
from attune_judge.judges import CriterionJudge, JudgeOptions, build_judge
from attune_judge.rubrics import load_rubric, parse_rubric
from attune_judge.testing import ScriptedEngine, TokenReply
from tests.conftest import REPO_ROOT

LN = math.log

CHECKLIST = parse_rubric(
    {
        "id": "three-questions",
        "version": "1",
        "description": "two dimensions",
        "kind": "checklist",
        "instructions": "Answer the question about the reply.",
        "scale": {"min": 1, "max": 5},
        "criteria": [
            {
                "id": "names_feeling",
                "name": "Names the feeling",
                "description": "Does the reply name the feeling?",
                "category": "empathy",
                "polarity": "positive",
            },
            {
                "id": "dismisses",
                "name": "Dismisses",
                "description": "Does the reply dismiss the feeling?",
                "category": "empathy",
                "polarity": "negative",
            },
            {
                "id": "on_topic",
                "name": "On topic",
                "description": "Does the reply answer what was said?",
                "category": "relevance",
                "polarity": "positive",
            },
        ],
    },
    "test",
)

# names_feeling: "yes" 0.6, "Yes" 0.2 (case ignored), "no" 0.1, "Maybe" 0.1
#   on the scale 0.9 -> P(yes) = 0.8 / 0.9 = 8/9; outside the scale 0.1
# dismisses: "no" 0.75, " yes" 0.25 -> P(yes) = 0.25 (negative: counts 0.75 as good)
# on_topic: "yes" 0.5, "no" 0.5 -> P(yes) = 0.5
#   empathy share = (8/9 + 0.75) / 2 = 59/72 -> score 1 + 4 * 59/72 = 1 + 59/18 = 77/18
#   relevance share = 0.5 -> 3.0
#   overall share = (8/9 + 0.75 + 0.5) / 3 = (32 + 27 + 18) / 108 = 77/108
#   overall = 1 + 4 * 77/108 = 1 + 77/27 = 104/27; normalized = 77/108
ANSWERS = {
    "name the feeling": TokenReply(
        "yes", ({"yes": LN(0.6), "Yes": LN(0.2), "no": LN(0.1), "Maybe": LN(0.1)},)
    ),
    "dismiss the feeling": TokenReply("no", ({"no": LN(0.75), " yes": LN(0.25)},)),
    "answer what was said": TokenReply("yes", ({"yes": LN(0.5), "no": LN(0.5)},)),
}


def _reply(messages: list[dict[str, str]]) -> TokenReply:
    user = messages[-1]["content"] if messages[-1]["role"] == "user" else messages[-2]["content"]
    (reply,) = [r for key, r in ANSWERS.items() if key in user]
    return reply


def test_checklist_p_yes_polarity_and_dimension_scores_by_hand(item: JudgeItem) -> None:
    engine = ScriptedEngine(_reply)
    judge = CriterionJudge(CHECKLIST, engine.lm(), score_mode="expected", use_reference=False)
    result = judge.judge(item)
    assert result.status == "ok", result.error
    assert engine.calls == 3  # one yes/no question per call
    assert "Answer with one word: yes or no." in str(engine.requests[0])
    p_yes = result.details["p_yes"]
    assert p_yes == pytest.approx({"names_feeling": 8 / 9, "dismisses": 0.25, "on_topic": 0.5})
    assert result.scores == pytest.approx({"empathy": 77 / 18, "relevance": 3.0})
    assert result.overall == pytest.approx(104 / 27)
    assert result.normalized == pytest.approx(77 / 108)
    names = result.details["distributions"]["names_feeling"]
    assert names["out_of_scale"] == pytest.approx(0.1)
    # entropy of (8/9, 1/9) in bits
    h = -(8 / 9 * math.log2(8 / 9) + 1 / 9 * math.log2(1 / 9))
    assert names["entropy_bits"] == pytest.approx(h)


def test_sampled_checklist_answers_are_read_strictly(item: JudgeItem) -> None:
    engine = ScriptedEngine(["Yes", "no", "yes"])
    result = CriterionJudge(CHECKLIST, engine.lm(), score_mode="sampled").judge(item)
    assert result.status == "ok", result.error
    # yes, no (negative: good), yes: every question answered well -> the top of the scale
    assert result.scores == {"empathy": 5.0, "relevance": 5.0} and result.normalized == 1.0
    bad = ScriptedEngine(["yes", "probably not", "yes"])
    failed = CriterionJudge(CHECKLIST, bad.lm(), score_mode="sampled").judge(item)
    assert failed.status == "parse_error" and failed.scores == {}
    assert "probably not" in str(failed.raw_output)


def test_a_checklist_is_never_judged_with_reasoning_or_a_reference() -> None:
    with pytest.raises(ValueError, match="without reasoning"):
        build_judge(CHECKLIST, ScriptedEngine(["yes"]).lm(), JudgeOptions(reasoning=True))
    with pytest.raises(ValueError, match="without a reference"):
        CriterionJudge(CHECKLIST, ScriptedEngine(["yes"]).lm(), use_reference=True)


@pytest.mark.parametrize(
    ("name", "dimensions"),
    [
        (
            "attunebench-checklist",
            {"overall_score", "emotional_appropriateness", "helpfulness", "tone_match"},
        ),
        (
            "empathic-communication-empatheticdialogues-checklist",
            {"empathy", "relevance", "fluency"},
        ),
    ],
)
def test_shipped_checklists_have_both_polarities_in_every_dimension(
    name: str, dimensions: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    rubric = load_rubric(name)
    assert rubric.kind == "checklist" and rubric.scale is not None
    assert {c.category for c in rubric.criteria} == dimensions
    for dim in dimensions:
        polarities = {c.polarity for c in rubric.criteria if c.category == dim}
        assert polarities == {"positive", "negative"}, (name, dim, polarities)
    path = REPO_ROOT / "rubrics" / f"{name}.yaml"
    with pytest.raises(SystemExit) as stop:
        main(["rubric", "check", str(path)])
    assert (stop.value.code or 0) == 0
    assert rubric.content_hash in capsys.readouterr().out


def test_the_shipped_attunebench_checklist_scores_all_four_dimensions(item: JudgeItem) -> None:
    # every question answered "yes" with certainty: positive ones good, negative ones bad; each
    # dimension has as many of both (asserted) -> share 1/2, the middle of the scale
    rubric = load_rubric("attunebench-checklist")
    for dim in {c.category for c in rubric.criteria}:
        pols = [c.polarity for c in rubric.criteria if c.category == dim]
        assert pols.count("positive") == pols.count("negative")
    engine = ScriptedEngine(lambda m: TokenReply("yes", ({"yes": 0.0},)))
    result = CriterionJudge(rubric, engine.lm(), score_mode="expected").judge(item)
    assert result.status == "ok", result.error
    assert engine.calls == len(rubric.criteria)
    middle = rubric.scale.min + (rubric.scale.max - rubric.scale.min) / 2
    assert result.scores == pytest.approx(dict.fromkeys(result.scores, middle))
    assert len(result.scores) == 4 and result.normalized == pytest.approx(0.5)
