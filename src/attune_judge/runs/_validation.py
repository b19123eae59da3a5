"""Typed blocks of the ``validate`` and ``demo`` summaries: a judge beside the recorded judges
and the people (:class:`JudgeRow`), the run's facts (:class:`ValidationInfo`), the no-model
baselines (:class:`BaselinesBlock`), the shipped calibration head's rows
(:class:`CalibratedBlock`), the validation's result (:class:`ValidationResult`, the demo's part
c) and DUO (:class:`DuoResult`, the demo's part b). Built on the calibration layer's results.
"""

from __future__ import annotations

from pydantic import Field

from attune_judge.calibration import (
    BaselineAgreement,
    CalibrationReport,
    Metric,
    ProbabilityScores,
)
from attune_judge.runs._manifest import JudgeSpec
from attune_judge.runs._study import _Record

__all__ = [
    "BaselineDimension",
    "BaselinesBlock",
    "CalibratedBlock",
    "DuoResult",
    "GroupComparison",
    "JudgeRow",
    "ValidationInfo",
    "ValidationResult",
]


class JudgeRow(_Record):
    """One judge on one dimension, in brief."""

    source: str
    """Source corpus of the dimension."""
    dimension: str
    """Rating dimension."""
    judge: str
    """Judge (``gpt``, ``claude``, ``gemini``, ``crowd``, or a judge id)."""
    n: int
    """Conversations compared."""
    kappa_qw: Metric | None
    """Quadratic-weighted κ of the judge vs the experts' median (observed categories)."""
    spearman: Metric | None
    """Spearman's ρ of the judge vs the experts' median."""
    alpha_humans: Metric | None
    """Krippendorff's α (ordinal) among the experts."""
    alpha_with_judge: Metric | None
    """α with the judge as one more coder."""
    kappa_ceiling_humans: float | None
    """Mean leave-one-out κ_qw of each expert vs the median of the other two."""
    kappa_ceiling_judge: float | None
    """Mean κ_qw of the judge vs the same two-expert medians."""
    spearman_ceiling_humans: float | None
    """Mean leave-one-out Spearman of each expert vs the median of the other two."""
    spearman_ceiling_judge: float | None
    """Mean Spearman of the judge vs the same medians."""
    alt_test_winning_rate: float | None
    """Alternative annotator test: share of experts the judge can replace (ω)."""
    alt_test_passed: bool | None
    """ω >= 0.5."""


class ValidationResult(_Record):
    """What ``validate_judge`` produced."""

    set_name: str
    """The validation set."""
    run_dir: str
    """Folder with items, the judge run (``run/``), ``summary.json``, ``validation.md``,
    ``calibration.md`` and the report (``report.md``, ``report.html``, ``figures/``)."""
    n_items: int
    """Items judged."""
    n_ok: int
    """Judgments with status ok."""
    n_failed: dict[str, int] = Field(default_factory=dict)
    """Failed judgments by status."""
    failure_reasons: dict[str, int] = Field(default_factory=dict)
    """Failed judgments by ``status (reason)``, e.g. ``parse_error (out_of_scale)``."""
    not_compared: str | None = None
    """Why the judge could not be compared with the people (fewer than two usable judgments,
    an undefined statistic); ``None`` when the comparison was made."""
    rows: list[JudgeRow] = Field(default_factory=list)
    """Agreement rows: the new judge and the recorded ones, per dimension."""
    distinct_score_vectors: int = 0
    """Different criterion-score combinations the judge gave (1 = the same for every item)."""
    summary: list[str] = Field(default_factory=list)
    """Short lines for the terminal."""
    seconds: float = 0.0
    """Wall time."""


class GroupComparison(_Record):
    """Mean participant rating per group (model or style) and pairwise differences."""

    dimension: str
    """Rating dimension."""
    factor: str
    """``model`` or ``style_prompt``."""
    cluster_by: str
    """``dialogue`` or ``participant``."""
    means: dict[str, Metric]
    """Mean per group with its interval."""
    differences: dict[str, Metric]
    """``a − b`` per pair of groups, percentile interval on the same cluster draws."""


class DuoResult(_Record):
    """Result of demo part b."""

    language: str
    """Which dialogues (``en``)."""
    observer_agreement: CalibrationReport | None = None
    """The participant (as rater under test) against the observers' median."""
    comparisons: list[GroupComparison] = Field(default_factory=list)
    """Model and style comparisons."""


class ValidationInfo(_Record):
    """``validate``'s facts: the set, the judge, counts, ``B``, ``seed`` and notes."""

    set_name: str
    lm: str
    judge_name: str
    rubric: str
    judge_spec: JudgeSpec | None = None
    """The judge's spec (its identity), when it has one."""
    description: str
    n_items: int
    n_ok: int
    n_failed: dict[str, int]
    """Failed judgments by status."""
    failure_reasons: dict[str, int]
    """Failed judgments by ``status (reason)``."""
    not_compared: str | None = None
    distinct_score_vectors: int
    B: int
    seed: int
    notes: list[str] = Field(default_factory=list)


class BaselineDimension(_Record):
    """One dimension: the judge's and the baselines' Spearman ρ with the people and the
    paired differences, and the judge's probability scores when it gave distributions."""

    agreement: BaselineAgreement
    probability_scores: ProbabilityScores | None = None


class BaselinesBlock(_Record):
    """A judge beside the no-model baselines (reply length, empathy lexicon), per dimension."""

    judge: str
    dimensions: dict[str, BaselineDimension] = Field(default_factory=dict)


class CalibratedBlock(_Record):
    """The shipped calibration head's scores and the raw ones beside the baselines, on the
    head's held-out items (``note`` alone: not compared, and why)."""

    head: str
    note: str | None = None
    artifact_hash: str | None = None
    calibrated: BaselinesBlock | None = None
    uncalibrated: BaselinesBlock | None = None
