"""DSPy judge programs, baseline judges and juries.

Every judge follows :class:`Judge`: ``judge_id``, ``spec`` and ``judge(item) -> Judgment``
(plus ``ajudge`` for async use). Build one with :func:`build_judge`: a baseline from
:data:`BASELINES`, or the judge of the rubric's kind from the registry :data:`JUDGE_KINDS`.
:func:`judge_item` judges one item (``attune-judge judge``).
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
from attune_judge.judges._criterion import (
    SCORE_MODES,
    CriterionJudge,
    ScoreMode,
    default_score_mode,
)
from attune_judge.judges._criterion_prompt import (
    CriterionDemo,
    criterion_labels,
    criterion_messages,
)
from attune_judge.judges._distribution import (
    DEFAULT_MAX_OUT_OF_SCALE,
    ScoreDistribution,
    level_probabilities,
    position_logprobs,
    read_distribution,
)
from attune_judge.judges._factory import (
    BASELINES,
    JUDGE_KINDS,
    JudgeBuilder,
    JudgeOptions,
    build_judge,
    build_jury,
    resolve_judge_lm,
)
from attune_judge.judges._items import attach_behaviour_items, pairwise_items_from_preferences
from attune_judge.judges._judge_item import judge_item, read_judge_item
from attune_judge.judges._jury import Jury, JuryMethod, combine
from attune_judge.judges._lexicon import EMPATHY_LEXICON, LexiconJudge, lexicon_count
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
    "DEFAULT_MAX_OUT_OF_SCALE",
    "EMPATHY_LEXICON",
    "JUDGE_KINDS",
    "SCORE_MODES",
    "AsyncJudge",
    "BehaviourJudge",
    "CallOutcome",
    "CriterionDemo",
    "CriterionJudge",
    "Judge",
    "JudgeBuilder",
    "JudgeOptions",
    "Jury",
    "JuryMethod",
    "LengthJudge",
    "LexicalJudge",
    "LexiconJudge",
    "PairwiseJudge",
    "ReferenceJudge",
    "ScoreDistribution",
    "ScoreMode",
    "acall_program",
    "attach_behaviour_items",
    "behaviour_score",
    "behaviour_signature",
    "build_judge",
    "build_jury",
    "call_program",
    "combine",
    "criterion_labels",
    "criterion_messages",
    "default_score_mode",
    "failure_judgment",
    "format_conversation",
    "hash_spec",
    "is_retryable",
    "item_judgment",
    "judge_item",
    "judge_spec",
    "lcs_length",
    "level_probabilities",
    "lexicon_count",
    "pairwise_item",
    "pairwise_items_from_preferences",
    "pairwise_signature",
    "position_logprobs",
    "read_distribution",
    "read_judge_item",
    "reconcile",
    "reference_signature",
    "render_criteria",
    "resolve_judge_lm",
    "rouge_l_f1",
    "token_f1",
    "tokens",
]
