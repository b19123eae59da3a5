"""Validate a judge (job 2): how far its labels agree with people's, and what people's labels
let you say about the models it ranks.

- :func:`validate_judge` (``attune-judge validate``): run a judge model on a shipped set's
  conversations and compare it with the set's people, beside the recorded judges, the
  human-to-human ceiling and the no-model baselines.
- :func:`calibrate_files` (``attune-judge calibrate``): a judge's ratings, judgments or
  preferences against human labels, from files, with the run directory and report.
- :func:`rank_scores` and :func:`ppi_rank` (``attune-judge rank``, ``rank --human``): a
  leaderboard with rank sets, and the judge's leaderboard corrected with human labels.
- :func:`recorded_judges_vs_experts`: the recorded LLM judges of the empathic-communication
  set against its experts (the demo's part a).

This layer reads files and writes run directories; the statistics themselves are
:mod:`attune_judge.calibration` (no I/O, no DSPy).
"""

from attune_judge.validate._calibrate import calibrate_files
from attune_judge.validate._files import check_human_labels, read_labels, record_kind
from attune_judge.validate._judge import validate_judge
from attune_judge.validate._rank import (
    pairwise_ranking_markdown,
    ppi_rank,
    rank_pairwise,
    rank_scores,
)
from attune_judge.validate._recorded import RecordedJudges, recorded_judges_vs_experts
from attune_judge.validate._report import judge_rows_table, validation_sections
from attune_judge.validate._sets import VALIDATION_SETS, load_calibration_set
from attune_judge.validate._style import (
    controlled_markdown,
    rank_controlled_run,
    rank_pairs,
    read_pairs,
)

__all__ = [
    "VALIDATION_SETS",
    "RecordedJudges",
    "calibrate_files",
    "check_human_labels",
    "controlled_markdown",
    "judge_rows_table",
    "load_calibration_set",
    "pairwise_ranking_markdown",
    "ppi_rank",
    "rank_controlled_run",
    "rank_pairs",
    "rank_pairwise",
    "rank_scores",
    "read_labels",
    "read_pairs",
    "record_kind",
    "recorded_judges_vs_experts",
    "validate_judge",
    "validation_sections",
]
