"""The typed ``align`` block of ``summary.json``: the aligned judge's manifest beside its
held-out proof (``align``'s optimizers: :class:`HeldOutProof`; ``align --method calibrate``:
:class:`CalibrationProof`), both built by :mod:`attune_judge.align`."""

from __future__ import annotations

from pydantic import Field

from attune_judge.calibration import Metric, ProbabilityScores
from attune_judge.data._aligned import AlignedJudgeManifest
from attune_judge.runs._study import _Record

__all__ = ["AlignBlock", "CalibrationProof", "CriterionProof", "HeldOutProof"]


class HeldOutProof(_Record):
    """Agreement with the people on the test split (mean per-item agreement, 1 = identical)."""

    metric: str
    """The per-item agreement (``ordinal``: 1 − |judge − human| / range, mean over criteria)."""
    n_items: int
    """Test items where both judges gave a usable judgment (the paired comparison)."""
    n_clusters: int
    """Conversations of those items."""
    n_failed_before: int
    """Test items the unaligned judge failed on (parse or model errors; not scores)."""
    n_failed_after: int
    """Test items the aligned judge failed on."""
    before: Metric
    """Unaligned judge."""
    after: Metric
    """Aligned judge (raw scores)."""
    after_mapped: Metric | None = None
    """Aligned judge with the score map, cross-fitted by conversation."""
    length_baseline: Metric
    """A judge that sees only length: ratings, a line of score on log(length) fitted on the
    train split; preferences, the longer reply wins."""
    length_rule: str = "fitted on train"
    """How the length baseline decides (for the report)."""
    position_baseline: Metric | None = None
    """Preferences: reply A (shown first) always wins."""
    inconsistent: dict[str, int] | None = None
    """Preferences: test pairs whose two orders gave opposite winners (``before``, ``after``);
    they count as disagreeing with the people."""
    human_ceiling: Metric | None = None
    """Each person against the mean of the others (items with ≥ 2 people)."""
    improvement: Metric
    """after − before, paired cluster bootstrap."""
    improvement_mapped: Metric | None = None
    """after (mapped) − before."""
    distinguishable: bool
    """Whether the interval of the improvement excludes zero."""
    verdict: str
    """The result in one plain sentence."""


class CriterionProof(_Record):
    """One criterion (or the overall): each system's metrics and the paired differences."""

    n_items: int
    n_clusters: int
    systems: dict[str, dict[str, Metric]] = Field(default_factory=dict)
    """System → metric (``rmse``, ``spearman``, ``kappa_qw``) → value with interval."""
    differences: dict[str, dict[str, Metric]] = Field(default_factory=dict)
    """``calibrated − length`` … → metric → paired cluster-bootstrap difference."""
    human_ceiling: dict[str, Metric] = Field(default_factory=dict)
    """One person against the mean of the others (items with ≥ 2 people)."""
    probability: dict[str, ProbabilityScores] = Field(default_factory=dict)
    """System → Brier score and ECE of its distributions against each person's level."""


class CalibrationProof(_Record):
    """The held-out proof of ``align --method calibrate``."""

    headline: str
    """The calibrated system the verdict is about (``calibrated`` or ``calibrated+reply``)."""
    n_items: int
    n_clusters: int
    n_failed: int
    """Test items whose judgment failed (no scores; left out of every comparison)."""
    criteria: dict[str, CriterionProof]
    """Criterion (and ``overall``) → its proof."""
    verdict: str


class AlignBlock(_Record):
    """An align run's summary block: the artifact's manifest and the proof of its method."""

    manifest: AlignedJudgeManifest
    """What ``aligned-judge.json`` records."""
    proof: HeldOutProof | None = None
    """The optimizers' held-out proof."""
    calibration_proof: CalibrationProof | None = None
    """The calibrated judge's held-out proof."""
