"""The aligned judge's manifest (``aligned-judge.json``) as a record, low enough for both
sides: ``judges`` reads an aligned judge's directory with it and ``runs`` types the ``align``
run's summary with it (the directory's layout is in :mod:`attune_judge.judges._aligned`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CALIBRATED_FORMAT",
    "FORMAT",
    "AlignedJudgeManifest",
    "CalibrateSettings",
    "CalibratedHeldOut",
    "HeldOutSummary",
    "OptimizerName",
    "OptimizerSettings",
    "ScoreMap",
    "SplitSummary",
]

FORMAT = "attune-aligned-judge/1"
CALIBRATED_FORMAT = "attune-calibrated-judge/1"
"""``align --method calibrate``: the same manifest, ``head.json`` in place of ``program.json``."""


class _Whole(BaseModel):
    """A part of the manifest written whole: every field counts as set, so a run summary's
    ``exclude_unset`` keeps defaults too (the discriminating ``name`` among them)."""

    model_config = ConfigDict(extra="forbid")

    def model_post_init(self, context: object, /) -> None:
        self.model_fields_set.update(type(self).model_fields)


OptimizerName = Literal["labeled-fewshot", "bootstrap-fewshot", "mipro", "gepa"]


class OptimizerSettings(_Whole):
    """Settings of the optimizer (recorded in the artifact)."""

    name: OptimizerName = "bootstrap-fewshot"
    max_labeled_demos: int = 4
    """Labelled demonstrations per program (all optimizers but gepa)."""
    max_bootstrapped_demos: int = 4
    """Bootstrapped demonstrations (bootstrap-fewshot, mipro)."""
    num_candidates: int = 4
    """Random-search candidate programs (bootstrap-fewshot), beyond the 3 fixed ones."""
    metric_threshold: float = 0.9
    """Agreement a bootstrapped demonstration must reach to be kept."""
    gepa_metric_calls: int | None = None
    """Metric calls GEPA may spend (default: what the call budget leaves)."""
    num_threads: int = 1
    """Parallel program calls inside the optimizer."""
    seed: int = 0


class CalibrateSettings(_Whole):
    """``align --method calibrate``: the fitted head's settings."""

    name: Literal["calibrate"] = "calibrate"
    head: str
    """The head's model (``proportional-odds with rater offsets``)."""
    reply_features: bool
    """Whether the reply's own features (length, lexicon) were inputs of the head."""
    penalty: dict[str, float]
    """The ridge penalties chosen on the dev split (``weights``, ``offsets``)."""
    penalty_grid: list[float]
    """The penalties tried."""


class SplitSummary(_Whole):
    """The conversation-level split, counted (the ids are in ``split.json``)."""

    seed: int
    fractions: list[float]
    """Train, dev and test shares of the conversations."""
    conversations: dict[str, int]
    """Part → conversations."""
    items: dict[str, int]
    """Part → items."""
    file: str = "split.json"


class HeldOutSummary(_Whole):
    """The optimizers' held-out proof in brief (the whole proof is in ``summary.json``)."""

    metric: str
    n_items: int
    before: float | None
    after: float | None
    after_mapped: float | None = None
    length_baseline: float | None = None
    """Absent from artifacts written before the length baseline existed."""
    position_baseline: float | None = None
    improvement: float | None
    improvement_lower: float | None
    improvement_upper: float | None
    distinguishable: bool
    verdict: str


class CalibratedHeldOut(BaseModel):
    """The calibrated judge's held-out proof in brief: the verdict, and per system (each a key
    of its own: ``calibrated``, ``length`` …) its overall metrics (``rmse``, ``spearman``,
    ``kappa_qw``). The systems are typed extra keys so that the file keeps its flat layout."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, dict[str, float | None]] = Field(init=False)

    verdict: str
    n_items: int


class ScoreMap(BaseModel):
    """Per criterion: judge score ``x`` → human-scale value ``y`` (non-decreasing in ``x``).

    Between the fitted points the map interpolates linearly; outside them it is constant.
    """

    model_config = ConfigDict(extra="forbid")

    points: dict[str, tuple[list[float], list[float]]]
    """Criterion → (judge scores ascending, mapped values)."""
    n: dict[str, int]
    """Criterion → pairs it was fitted on."""

    def apply(self, criterion: str, value: float) -> float:
        """The mapped value (the value itself for a criterion without a map)."""
        import numpy as np

        if criterion not in self.points:
            return float(value)
        x, y = self.points[criterion]
        return float(np.interp(value, x, y))

    def apply_all(self, scores: Mapping[str, float]) -> dict[str, float]:
        """Every criterion of ``scores`` mapped."""
        return {k: self.apply(k, v) for k, v in scores.items()}


class AlignedJudgeManifest(BaseModel):
    """What ``aligned-judge.json`` records."""

    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    rubric: dict[str, str]
    """Rubric id, version and content hash."""
    judge_program: str
    """``reference`` (the program that was optimised)."""
    judge_options: dict[str, bool]
    """``use_reference``, ``reasoning``."""
    lm: str
    """The model string the judge was aligned on."""
    lm_spec: dict[str, str | float | int | None] = Field(default_factory=dict)
    """The model's identity as recorded in judge specs."""
    optimizer: Annotated[OptimizerSettings | CalibrateSettings, Field(discriminator="name")]
    """Optimizer name and settings (``calibrate``: the head's)."""
    metric: str
    """Metric the optimizer maximised (``ordinal`` ...)."""
    split: SplitSummary
    """Seed, fractions, counts of conversations and items per part."""
    source: str
    """Labels the judge was aligned to."""
    held_out: HeldOutSummary | CalibratedHeldOut = Field(union_mode="left_to_right")
    """Summary of the held-out proof (before, after, improvement, verdict)."""
    score_map: ScoreMap | None = None
    """Monotone map of the judge's scores to the human scale (applied when judging)."""
    program_sha256: str
    """sha256 of ``program.json`` (a calibrated judge: of ``head.json``)."""
    artifact_hash: str
    """Hash of program, rubric, options and score map: part of the judge id."""
    calls: dict[str, int] = Field(default_factory=dict)
    """LM calls spent: optimizer, evaluation."""
    created_at: str
    versions: dict[str, str] = Field(default_factory=dict)
