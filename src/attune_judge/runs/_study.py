"""Typed study blocks of ``summary.json``: the prediction-powered leaderboard (``ppi``) and the
rubric-sensitivity study (``sensitivity``, also the demo's part d), each built on the
statistics layer's own results. Unknown keys are an error, as in every record.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.calibration import Metric, ModelScore, PPILeaderboard, SensitivityAnalysis

__all__ = [
    "Flip",
    "PpiBlock",
    "SensitivityBlock",
    "SensitivityVariant",
    "StudySettings",
    "TauMatrix",
    "VarianceShare",
]


class _Record(BaseModel):
    """Base of every record: unknown keys are an error (a new field is declared here)."""

    model_config = ConfigDict(extra="forbid")


class PpiBlock(PPILeaderboard):
    """A prediction-powered leaderboard with the join of the human labels it rests on."""

    dimension: str
    """The human dimension the judge's scores were corrected towards."""
    n_human_items: int
    n_matched: int
    """Human-labelled items the judge scored."""
    human_scale: tuple[float, float] | None = None
    """The declared (LOW, HIGH) of the human labels (``None``: read from the labels)."""
    field: Literal["normalized", "overall"] = "normalized"
    """The judgment field corrected."""


class SensitivityVariant(_Record):
    """One variant of a sensitivity study: what it changed, its judge, and its results."""

    name: str
    perturbations: list[str]
    """Perturbation names applied, in order (empty for the base)."""
    rubric: dict[str, str]
    """The (perturbed) rubric's spec (``Rubric.spec()``: id, version, content hash)."""
    lm: str | None
    reasoning: bool
    use_reference: bool
    factors: dict[str, str]
    """The variant's level of every design factor (variance decomposition)."""
    judge_id: str
    same_judge_as: list[str]
    """Other variants that are the same judge (same rubric and options)."""
    leaderboard: list[ModelScore] | None = None
    n_scores: int | None = None
    n_missing: int | None = None
    tau: Metric | None = None
    """Kendall τ-b of this variant's ranking against the base's."""
    stable: bool | None = None
    verdict: Literal["stable", "UNSTABLE", "inconclusive"] | None = None
    reasons: list[str] = Field(default_factory=list)


class StudySettings(_Record):
    """The analysis settings of the variants file (``analysis:``)."""

    alpha: float
    tau_threshold: float
    adjust: Literal["bonferroni", "none"]
    B: int
    seed: int
    variance_method: Literal["auto", "anova", "mixedlm"]


class TauMatrix(_Record):
    """Kendall τ-b between the point-estimate rankings of every two variants."""

    labels: list[str]
    matrix: list[list[float | None]]


class Flip(_Record):
    """Two models whose order a variant swaps relative to the base."""

    variant: str
    model_a: str
    model_b: str
    delta_base: float
    delta_variant: float
    within_intervals: bool
    significant: bool


class VarianceShare(_Record):
    """One component of the score variance and its share."""

    component: str
    variance: float
    share: float


class SensitivityBlock(_Record):
    """A sensitivity run's study: variants with their leaderboards and verdicts, τ between
    rankings, rank flips, variance shares, and the full :class:`SensitivityAnalysis`
    (``analysis``; absent when the analysis could not run, ``notes`` say why)."""

    kind: Literal["sensitivity"] = "sensitivity"
    study: str
    description: str | None = None
    base: str
    settings: StudySettings
    notes: list[str] = Field(default_factory=list)
    variants: dict[str, SensitivityVariant]
    rule: str | None = None
    tau_matrix: TauMatrix | None = None
    flips: list[Flip] | None = None
    variance_components: list[VarianceShare] | None = None
    analysis: SensitivityAnalysis | None = None
