"""Result models of the sensitivity analysis (all serialise with ``model_dump()``): the
statistics layer's types, so the run record and the report read them without the study."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from attune_judge.calibration._results import Metric, ResultModel

__all__ = [
    "CriterionShift",
    "ModelScore",
    "PairComparison",
    "SensitivityAnalysis",
    "VarianceComponent",
    "VarianceDecomposition",
    "VariantRanking",
    "VariantVerdict",
]


class ModelScore(ResultModel):
    """One model's score under one variant."""

    model: str
    """Candidate model."""
    score: Metric
    """Mean score with its paired cluster-bootstrap interval."""
    rank: int | None
    """Point rank ``1 + #{k : θ̂_k > θ̂_j}`` (1 = best); ``None`` without a score."""
    rank_set: tuple[int, int] | None = None
    """Simultaneous confidence set for the rank (Mogstad et al. 2024), when computed."""
    shift: Metric | None = None
    """This variant's mean minus the base's, paired interval (``None`` for the base)."""


class VariantRanking(ResultModel):
    """Scores and ranking of the models under one variant."""

    variant: str
    """Variant name."""
    models: list[ModelScore]
    """One entry per model, best first (models without a score last)."""
    tau: Metric | None = None
    """Kendall τ-b between this variant's model means and the base's, with a paired bootstrap
    interval; ``None`` for the base."""
    n_scores: int
    """Number of (non-missing) scores."""
    n_missing: int
    """Rows whose score is missing (failed or absent judgments)."""


class PairComparison(ResultModel):
    """How one pair of models compares under the base and under one variant.

    ``model_a`` is the pair member ranked higher by the base; all differences are
    ``a − b``, so a positive ``base_diff`` is the base order and a negative ``variant_diff``
    a flip.
    """

    variant: str
    """Variant name."""
    model_a: str
    """The model the base ranks higher (or the first of a tied pair)."""
    model_b: str
    """The other model."""
    base_diff: float
    """Base mean of a minus mean of b (≥ 0)."""
    base_lower: float | None
    """Lower end of the base difference's interval (at ``pair_level``)."""
    base_upper: float | None
    """Upper end of the base difference's interval."""
    variant_diff: float
    """Variant mean of a minus mean of b."""
    variant_lower: float | None
    """Lower end of the variant difference's interval (at ``pair_level``)."""
    variant_upper: float | None
    """Upper end of the variant difference's interval."""
    change: Metric
    """``variant_diff − base_diff`` with its paired interval (at ``pair_level``)."""
    flipped: bool
    """The point estimates order the pair oppositely (a tie in either is not a flip)."""
    inside_intervals: bool
    """The flip lies inside the intervals: the base or the variant difference interval
    contains 0. Always ``False`` when not flipped."""
    significant: bool
    """A flip whose variant interval lies entirely on the flipped side of 0 (``variant_upper
    < 0``): the variant confidently reverses the base's order."""


class CriterionShift(ResultModel):
    """Change of one criterion's mean (all models pooled, normalised to [0, 1])."""

    variant: str
    """Variant name."""
    criterion: str
    """Criterion id (present under both the base and the variant)."""
    base_mean: float | None
    """Base mean of the normalised criterion score."""
    variant_mean: float | None
    """Variant mean of the normalised criterion score."""
    shift: Metric
    """``variant_mean − base_mean`` with its paired cluster-bootstrap interval."""


class VarianceComponent(ResultModel):
    """One source of score variance."""

    source: str
    """``model``, ``conversation``, ``variant``, ``judge`` or ``residual``."""
    levels: int
    """Number of levels of the factor (rows, for the residual)."""
    variance: float
    """Estimated variance component σ² (negative method-of-moments estimates set to 0)."""
    share: float
    """``variance`` divided by the sum of all components."""
    ss_share: float | None = None
    """Share of the total sum of squares (η²); ANOVA only."""
    truncated: bool = False
    """The raw estimate was negative and was set to 0."""


class VarianceDecomposition(ResultModel):
    """Scores split into model, conversation, variant, judge and residual variance."""

    method: Literal["anova", "mixedlm"]
    """``anova``: method of moments on a type-I ANOVA (statsmodels ols + anova_lm) of a
    design whose factors have proportional frequencies; ``mixedlm``: REML fit (statsmodels
    MixedLM) with a random intercept per conversation and the other factors fixed, each
    fixed factor's component being the variance of its fitted contribution."""
    formula: str
    """The fixed-effects formula (anova) or the variance-component formulas (mixedlm)."""
    components: list[VarianceComponent]
    """One per factor with at least two levels, then ``residual``."""
    n: int
    """Number of scores used."""
    dropped_factors: list[str]
    """Factors left out because they have a single level."""
    note: str
    """How to read the shares (and any fallback)."""


class VariantVerdict(ResultModel):
    """Whether the base's ranking survives this variant at the declared α."""

    variant: str
    """Variant name."""
    stable: bool
    """``True`` only when the verdict is ``stable`` (see ``SensitivityAnalysis.rule``)."""
    reasons: list[str]
    """Why the variant is unstable, or why stability is not established (empty when
    stable)."""
    verdict: Literal["stable", "unstable", "inconclusive"] = "stable"
    """From the intervals, never from point estimates alone: ``unstable`` (a significant
    flip, or τ's upper bound below the threshold), ``stable`` (no significant flip and τ's
    lower bound at or above the threshold, with at least ``MIN_CLUSTERS`` conversations),
    else ``inconclusive``."""
    tau_lower: float | None = None
    """Lower end of τ's interval."""
    n_flips: int
    """Pairs ordered oppositely by the point estimates."""
    n_significant_flips: int
    """Flips the variant's interval confirms."""
    tau: float | None
    """Kendall τ-b with the base."""
    tau_upper: float | None
    """Upper end of τ's interval."""


class SensitivityAnalysis(ResultModel):
    """Everything ``analyze_sensitivity`` computes."""

    kind: Literal["sensitivity"] = "sensitivity"
    """Result kind (also the ``kind`` of a sensitivity run's summary.json)."""
    base: str
    """The base variant's name."""
    variants: list[str]
    """All variants, base first."""
    models: list[str]
    """All models, sorted."""
    alpha: float
    """Declared α of the verdicts."""
    level: float
    """Confidence level of scores, shifts and τ intervals, ``1 − α``."""
    pair_level: float
    """Confidence level of each pair-difference interval (``1 − α / n_pairs`` with
    Bonferroni, else ``1 − α``)."""
    adjust: Literal["bonferroni", "none"]
    """Multiplicity adjustment over the model pairs of one variant."""
    tau_threshold: float
    """A variant whose τ upper bound falls below this is unstable."""
    B: int
    """Bootstrap replicates (one weights matrix shared by every variant and model)."""
    seed: int
    """Seed of the cluster weights."""
    n_conversations: int
    """Number of clusters resampled."""
    rankings: list[VariantRanking]
    """Per variant, base first."""
    pairs: list[PairComparison]
    """Every model pair of every non-base variant (the rank-flip table is the flipped ones)."""
    criterion_shifts: list[CriterionShift]
    """Per non-base variant and shared criterion."""
    variance: VarianceDecomposition | None
    """Variance decomposition, when computed."""
    verdicts: list[VariantVerdict]
    """One per non-base variant."""
    rule: str
    """The verdict rule in words."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats of every interval here (too few conversations)."""

    def verdict(self, variant: str) -> VariantVerdict:
        """The verdict of one variant (``KeyError`` if unknown or the base)."""
        for v in self.verdicts:
            if v.variant == variant:
                return v
        raise KeyError(f"no verdict for variant {variant!r}")

    def ranking(self, variant: str) -> VariantRanking:
        """The ranking of one variant."""
        for r in self.rankings:
            if r.variant == variant:
                return r
        raise KeyError(f"no ranking for variant {variant!r}")

    @property
    def flips(self) -> list[PairComparison]:
        """The rank-flip table: pairs whose order differs from the base."""
        return [p for p in self.pairs if p.flipped]
