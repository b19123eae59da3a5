"""Judges behind a registry: every rubric kind has a builder in ``JUDGE_KINDS``, build_judge
dispatches through it (a new kind is one entry), and ``judge_item`` is the ``judge`` command."""

from __future__ import annotations

import typing

import pytest

from attune_judge.data import ChatMessage, JudgeItem
from attune_judge.judges import (
    BASELINES,
    JUDGE_KINDS,
    CriterionJudge,
    JudgeOptions,
    LexiconJudge,
    build_judge,
    judge_item,
)
from attune_judge.rubrics import Rubric, load_rubric
from attune_judge.testing import ScriptedEngine


def test_every_rubric_kind_has_a_builder() -> None:
    assert set(JUDGE_KINDS) == set(typing.get_args(Rubric.model_fields["kind"].annotation))
    assert set(BASELINES) == {"length", "lexical", "lexicon"}
    assert isinstance(build_judge("lexicon"), LexiconJudge)


def test_build_judge_dispatches_through_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, bool]] = []
    marker = object()

    def fake(rubric: Rubric, model: object, options: JudgeOptions) -> object:
        seen.append((rubric.kind, options.reasoning))
        return marker

    monkeypatch.setitem(JUDGE_KINDS, "pairwise", fake)
    lm = ScriptedEngine(lambda m: "{}").lm()
    assert build_judge("attunebench-pairwise", lm, JudgeOptions(reasoning=True)) is marker
    assert seen == [("pairwise", True)]


def test_checklist_and_option_errors_are_unchanged() -> None:
    lm = ScriptedEngine(lambda m: "{}").lm()
    assert isinstance(build_judge("attunebench-checklist", lm), CriterionJudge)
    with pytest.raises(ValueError, match="one question per call, without reasoning"):
        build_judge("attunebench-checklist", lm, JudgeOptions(reasoning=True))
    with pytest.raises(ValueError, match="apply to reference and checklist rubrics"):
        build_judge("attunebench-behaviours", lm, JudgeOptions(per_criterion=True))
    with pytest.raises(ValueError, match="use_reference only applies"):
        build_judge("attunebench-behaviours", lm, JudgeOptions(use_reference=True))
    rubric = load_rubric("attunebench-reference")
    judge = build_judge(rubric, lm, JudgeOptions(per_criterion=True, use_reference=False))
    assert isinstance(judge, CriterionJudge) and judge.use_reference is False


def test_judge_item_with_a_baseline_needs_no_model() -> None:
    item = JudgeItem(
        item_id="c:0:m",
        conversation_id="c",
        turn=0,
        candidate_model="m",
        context=[ChatMessage(role="user", content="I feel low today.")],
        candidate="That sounds hard.",  # three words
    )
    judgment = judge_item(item, "length")
    assert not isinstance(judgment, list)
    assert judgment.status == "ok"
    assert judgment.overall == pytest.approx(len("That sounds hard.".split()))
