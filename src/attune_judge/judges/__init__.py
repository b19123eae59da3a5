"""DSPy judge programs, baseline judges and juries.

Every judge follows :class:`Judge`: ``judge_id``, ``spec`` and ``judge(item) -> Judgment``
(plus ``ajudge`` for async use). Build one with :func:`build_judge`.
"""

from attune_judge.judges._base import (
    CallOutcome,
    acall_program,
    call_program,
    failure_judgment,
    format_conversation,
    hash_spec,
    is_retryable,
    item_judgment,
    judge_spec,
)
from attune_judge.judges._baselines import (
    LengthJudge,
    LexicalJudge,
    lcs_length,
    rouge_l_f1,
    token_f1,
    tokens,
)
from attune_judge.judges._behaviour import BehaviourJudge, behaviour_score, behaviour_signature
from attune_judge.judges._factory import BASELINES, build_judge, build_jury, resolve_judge_lm
from attune_judge.judges._items import attach_behaviour_items, pairwise_items_from_preferences
from attune_judge.judges._jury import Jury, JuryMethod, combine
from attune_judge.judges._pairwise import (
    PairwiseJudge,
    pairwise_item,
    pairwise_signature,
    reconcile,
)
from attune_judge.judges._protocol import AsyncJudge, Judge
from attune_judge.judges._reference import ReferenceJudge, reference_signature, render_criteria

__all__ = [
    "BASELINES",
    "AsyncJudge",
    "BehaviourJudge",
    "CallOutcome",
    "Judge",
    "Jury",
    "JuryMethod",
    "LengthJudge",
    "LexicalJudge",
    "PairwiseJudge",
    "ReferenceJudge",
    "acall_program",
    "attach_behaviour_items",
    "behaviour_score",
    "behaviour_signature",
    "build_judge",
    "build_jury",
    "call_program",
    "combine",
    "failure_judgment",
    "format_conversation",
    "hash_spec",
    "is_retryable",
    "item_judgment",
    "judge_spec",
    "lcs_length",
    "pairwise_item",
    "pairwise_items_from_preferences",
    "pairwise_signature",
    "reconcile",
    "reference_signature",
    "render_criteria",
    "resolve_judge_lm",
    "rouge_l_f1",
    "token_f1",
    "tokens",
]
