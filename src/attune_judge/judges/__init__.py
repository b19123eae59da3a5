"""DSPy judge programs, baseline judges and juries.

Every judge follows :class:`Judge`: ``judge_id``, ``spec`` and ``judge(item) -> Judgment``
(plus ``ajudge`` for async use). Build one with :func:`build_judge`: a baseline from
:data:`BASELINES`, or the judge of the rubric's kind from the registry :data:`JUDGE_KINDS`.
:func:`judge_item` judges one item (``attune-judge judge``).
"""

import importlib
from typing import TYPE_CHECKING, Any

from attune_judge.judges._base import (
    call_program,
    failure_judgment,
    format_conversation,
    item_judgment,
)
from attune_judge.judges._baselines import LengthJudge, LexicalJudge
from attune_judge.judges._criterion_prompt import CriterionDemo
from attune_judge.judges._distribution import WARN_OUT_OF_SCALE
from attune_judge.judges._lexicon import EMPATHY_LEXICON, LexiconJudge
from attune_judge.judges._protocol import Judge

if TYPE_CHECKING:
    from attune_judge.judges._behaviour import BehaviourJudge
    from attune_judge.judges._criterion import CriterionJudge
    from attune_judge.judges._factory import (
        BASELINES,
        JUDGE_KINDS,
        JudgeOptions,
        build_judge,
        build_jury,
    )
    from attune_judge.judges._items import attach_behaviour_items, pairwise_items_from_preferences
    from attune_judge.judges._judge_item import judge_item, read_judge_item
    from attune_judge.judges._jury import Jury, JuryMethod, combine
    from attune_judge.judges._pairwise import PairwiseJudge, pairwise_item
    from attune_judge.judges._reference import ReferenceJudge

_LAZY = {
    "BASELINES": "_factory",
    "BehaviourJudge": "_behaviour",
    "CriterionJudge": "_criterion",
    "JUDGE_KINDS": "_factory",
    "JudgeOptions": "_factory",
    "Jury": "_jury",
    "JuryMethod": "_jury",
    "PairwiseJudge": "_pairwise",
    "ReferenceJudge": "_reference",
    "attach_behaviour_items": "_items",
    "build_judge": "_factory",
    "build_jury": "_factory",
    "combine": "_jury",
    "judge_item": "_judge_item",
    "pairwise_item": "_pairwise",
    "pairwise_items_from_preferences": "_items",
    "read_judge_item": "_judge_item",
}
"""Names whose modules import DSPy (judges subclass ``dspy.Module``): imported on
first use, so importing this package (the runner does) stays free of DSPy."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BASELINES",
    "EMPATHY_LEXICON",
    "JUDGE_KINDS",
    "WARN_OUT_OF_SCALE",
    "BehaviourJudge",
    "CriterionDemo",
    "CriterionJudge",
    "Judge",
    "JudgeOptions",
    "Jury",
    "JuryMethod",
    "LengthJudge",
    "LexicalJudge",
    "LexiconJudge",
    "PairwiseJudge",
    "ReferenceJudge",
    "attach_behaviour_items",
    "build_judge",
    "build_jury",
    "call_program",
    "combine",
    "failure_judgment",
    "format_conversation",
    "item_judgment",
    "judge_item",
    "pairwise_item",
    "pairwise_items_from_preferences",
    "read_judge_item",
]
