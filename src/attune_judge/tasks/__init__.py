"""AttuneBench evaluated-model tasks: programs, scorers, runs and the cross-task analysis.

The five tasks (ATTUNEBENCH.md): ``drafting`` (a reply scored by a reference judge against the
participant-edited one, plus its alignment with the participant's preferred behaviour),
``emotion`` (PANAS-SF tags), ``behaviour`` (what the original reply did / what the participant
wanted), ``preference`` (which response the participant chose) and ``conversation``
(post-PANAS, q1-q3, four-branch scores). :func:`run_bench` runs them for several models into a
run directory; :func:`analyse_records` ranks the models per task with intervals and measures
how far the task rankings agree.
"""

from attune_judge.tasks._analysis import TASK_METRICS, analyse_records
from attune_judge.tasks._behaviour import (
    BEHAVIOUR_TARGETS,
    Confusion,
    confusion_of,
    score_behaviour,
)
from attune_judge.tasks._conversation import score_conversation
from attune_judge.tasks._drafting import behaviour_alignment, normalise_draft_scores, score_draft
from attune_judge.tasks._emotion import NEUTRAL, EmotionTag, normalise_tags, score_emotion, set_prf
from attune_judge.tasks._evaluators import PRIMARY_METRIC, TaskEvaluator
from attune_judge.tasks._items import TASKS, TaskName, conversation_context, task_units
from attune_judge.tasks._preference import (
    PresentedComparison,
    kendall_tau_b,
    present_comparison,
    score_preferences,
    win_counts,
)
from attune_judge.tasks._programs import PROGRAMS_VERSION
from attune_judge.tasks._records import TaskRecord, record_from_judgment
from attune_judge.tasks._run import BenchConfig, BenchResult, parse_model_spec, run_bench

__all__ = [
    "BEHAVIOUR_TARGETS",
    "NEUTRAL",
    "PRIMARY_METRIC",
    "PROGRAMS_VERSION",
    "TASKS",
    "TASK_METRICS",
    "BenchConfig",
    "BenchResult",
    "Confusion",
    "EmotionTag",
    "PresentedComparison",
    "TaskEvaluator",
    "TaskName",
    "TaskRecord",
    "analyse_records",
    "behaviour_alignment",
    "confusion_of",
    "conversation_context",
    "kendall_tau_b",
    "normalise_draft_scores",
    "normalise_tags",
    "parse_model_spec",
    "present_comparison",
    "record_from_judgment",
    "run_bench",
    "score_behaviour",
    "score_conversation",
    "score_draft",
    "score_emotion",
    "score_preferences",
    "set_prf",
    "task_units",
    "win_counts",
]
