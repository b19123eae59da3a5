"""Typed records of a run directory's ``summary.json``, one model per run kind.

Every summary carries ``schema_version`` (:data:`SCHEMA_VERSION`) and ``kind`` (``score``
when absent: summaries written before the kind was stamped). Unknown keys are an error: a new
summary field is one declaration here (and ``write_schemas()``). The scoring blocks are typed
down to the statistics layer's own results (``Leaderboard``, ``PositionBias``,
``BradleyTerryResult``, ``PanelAgreement``), and so are the study blocks written by upper
layers (``calibration``, ``validate``'s, ``bench``, ``sensitivity``, the demo's parts: see
``_agreement.py``, ``_validation.py``, ``_bench.py``, ``_study.py``, ``_align.py``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from attune_judge._schema_version import SCHEMA_VERSION
from attune_judge.calibration import (
    BradleyTerryResult,
    Leaderboard,
    LengthControlledMeans,
    LengthControlledResult,
    PanelAgreement,
    PositionBias,
    StyleControlledResult,
)
from attune_judge.runs._agreement import CalibrationBlock, FittedCheck
from attune_judge.runs._align import AlignBlock
from attune_judge.runs._bench import BenchBlock
from attune_judge.runs._study import PpiBlock, SensitivityBlock, _Record
from attune_judge.runs._validation import (
    BaselinesBlock,
    CalibratedBlock,
    DuoResult,
    JudgeRow,
    ValidationInfo,
    ValidationResult,
)

__all__ = [
    "SUMMARY_MODELS",
    "AlignSummary",
    "BenchSummary",
    "CalibrateSummary",
    "ControlledBlock",
    "ControlledSummary",
    "DegenerateFinding",
    "DemoSummary",
    "JudgeBlock",
    "JudgedSummary",
    "MemberTotals",
    "ModelBlock",
    "PairwiseBlock",
    "PanelBlock",
    "PanelNote",
    "PpiSummary",
    "RunFacts",
    "RunSummary",
    "ScoreInterval",
    "ScoreSummary",
    "SensitivitySummary",
    "Tokens",
    "Totals",
    "ValidateSummary",
    "parse_summary",
]


class RunSummary(_Record):
    """What every ``summary.json`` has: its layout version and its kind."""

    schema_version: int = SCHEMA_VERSION
    """Layout version (summaries written before versioning are read as version 1)."""
    kind: str = "score"
    """The run kind (``score`` when absent: the runner's summary of a scoring run)."""


class ScoreInterval(_Record):
    """A model's normalised-score mean with its interval: its leaderboard row's
    (:class:`~attune_judge.calibration.LeaderboardRow`), so the judge's leaderboard and its
    model blocks are one computation."""

    mean: float | None
    lower: float | None
    upper: float | None
    level: float
    method: str
    B: int
    """Bootstrap replicates."""
    seed: int
    n: int
    """Judgments in the mean (``ok`` only)."""
    n_conversations: int
    """Conversations resampled (the clusters)."""
    note: str | None = None
    """Why the interval is not the requested method's, or is degenerate (zero width)."""


class Tokens(_Record):
    """Tokens and calls summed over judgments."""

    prompt: int = 0
    completion: int = 0
    calls: int = 0


class Totals(_Record):
    """Tokens and cost summed over model blocks; ``cost_usd`` ``None`` when any is unknown."""

    tokens: Tokens
    cost_usd: float | None
    cost_usd_known: float | None
    n_cost_known: int
    n_judged: int


class ModelBlock(_Record):
    """Per judge and candidate model: what was planned, judged, failed, and the scores."""

    n_planned: int
    n_judged: int
    n_ok: int
    n_by_status: dict[str, int]
    """Every planned judgment under one of ok, parse_error, lm_error, refused, missing."""
    score: ScoreInterval | None = None
    overall_mean: float | None = None
    criteria_means: dict[str, float | None] = Field(default_factory=dict)
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    cost_usd_known: float | None = None
    n_cost_known: int = 0
    latency_s_mean: float | None = None
    request_s_mean: float | None = None
    queue_s_mean: float | None = None
    retries: int = 0


class MemberTotals(_Record):
    """A jury member's tokens and cost (over all its judgments, every status)."""

    judge_id: str
    tokens: Tokens
    n_judged: int
    n_cost_known: int
    cost_usd: float | None
    cost_usd_known: float | None


class DegenerateFinding(_Record):
    """A judge whose scores carry no information (``attune_judge.runner._degenerate``)."""

    criterion: str | None
    """The criterion (or ``verdict``, a behaviour item, ``judge_scores.<criterion>``);
    ``None`` for the judge as a whole."""
    reason: Literal["constant", "criterion_order", "off_scale"]
    """``constant``: one value for every item; ``criterion_order``: every answer scores the
    criteria 1, 2, 3, ... (or 0, 1, 2, ...) in their order; ``off_scale``: on most answers
    most of the answer token's probability lay outside the scale (expected-score mode)."""
    value: float | str | bool | None
    """The one value given (``constant``)."""
    n: int
    """The ok answers it was seen on."""
    message: str
    """The sentence the warning and the report show."""
    judge_id: str | None = None
    """The judge, where the list is not inside its judge block (validate, bench)."""


class PairCounts(_Record):
    """The verdicts of one option pair, each option's wins whichever side it was shown on."""

    n: int
    wins: dict[str, int]
    ties: int
    inconsistent: int


class PairwiseRankingBlock(_Record):
    """The Bradley–Terry fit of one group of options compared with each other."""

    options: list[str]
    bradley_terry: BradleyTerryResult | None
    note: str | None = None


class BootstrapSettings(_Record):
    """The settings a stored statistic was computed with."""

    B: int
    seed: int
    level: float


class PairwiseBlock(_Record):
    """A pairwise judge's verdict counts, position bias and rankings of the options."""

    n_pairs: int
    verdicts: dict[str, int]
    by_pair: dict[str, PairCounts]
    position_bias: PositionBias | None
    position_bias_note: str | None = None
    rankings: list[PairwiseRankingBlock] | None = None
    ranking_note: str | None = None
    """Why there is no ranking."""
    ranking_settings: BootstrapSettings | None = None


class JudgeBlock(_Record):
    """Per judge (``judge_id``): a label, a :class:`ModelBlock` per candidate model, and the
    judge's one leaderboard (or, for a pairwise judge, its :class:`PairwiseBlock`)."""

    label: str
    models: dict[str, ModelBlock]
    totals: Totals | None = None
    leaderboard: Leaderboard | None = None
    """The models' normalised scores with intervals and rank sets (``None``: no ok score in
    two or more conversations, or a pairwise judge)."""
    pairwise: PairwiseBlock | None = None
    """A pairwise judge's verdict counts, position bias and per-pair results."""
    members: dict[str, MemberTotals] = Field(default_factory=dict)
    """A jury's tokens and cost per member model."""
    degenerate: list[DegenerateFinding] = Field(default_factory=list)
    """Criteria on which the judge gave one value to every item, or the judge as a whole when
    its scores only follow the criterion order (empty: informative)."""
    warnings: list[str] = Field(default_factory=list)
    """What the score intervals cannot promise: scores that are not finite, too few
    conversations, every score at a bound, zero-width intervals (``calibration._bounded``)."""


class PanelBlock(PanelAgreement):
    """Agreement within a panel (a jury, or every judge of the run: ``jury_id`` ``None``)."""

    jury_id: str | None


class PanelNote(_Record):
    """A panel whose agreement could not be computed, and why."""

    jury_id: str | None
    note: str


class RunFacts(_Record):
    """The runner's facts about the run (``run``): tasks, statuses, completeness, timing."""

    n_tasks: int
    n_by_status: dict[str, int]
    complete: bool
    totals: Totals | None = None
    wall_time_s: float | None = None
    """Wall time of the last invocation."""
    wall_time_total_s: float | None = None
    """Wall time of every invocation."""
    n_skipped: int | None = None
    n_run: int | None = None
    stopped: str | None = None
    """Why the last invocation stopped before finishing its plan."""
    invocations: int | None = None
    adaptive: bool | None = None
    """Whether the work in flight adapted to rate limits (``--no-adaptive``: fixed)."""
    n_rate_limited: int | None = None
    """Rate-limited answers (HTTP 429 or ``Retry-After``) in the last invocation."""
    n_backoffs: int | None = None
    """Times the last invocation cut the work in flight after a rate limit."""
    max_in_flight: int | None = None
    """Most work in flight at once in the last invocation (``--max-concurrency`` caps it)."""


class JudgedSummary(RunSummary):
    """The runner's blocks of a run of judges: run facts, per judge blocks, panels."""

    run: RunFacts
    judges: dict[str, JudgeBlock]
    panels: list[PanelBlock | PanelNote] = Field(default_factory=list)
    """Juries and several judges on the same items."""


class ScoreSummary(JudgedSummary):
    """``score``: per judge and model, counts by status and scores with intervals."""

    kind: Literal["score"] = "score"


class SensitivitySummary(JudgedSummary):
    """``sensitivity``: the runner's blocks for every variant's judge plus the study."""

    kind: Literal["sensitivity"] = "sensitivity"
    sensitivity: SensitivityBlock
    """Variants, leaderboards, τ, flips, verdicts, variance (``sensitivity/_summary.py``)."""


class BenchSummary(RunSummary):
    """``bench``: the run facts and the per-task analysis (``tasks.analyse_records``)."""

    kind: Literal["bench"] = "bench"
    run: RunFacts
    bench: BenchBlock
    degenerate: list[DegenerateFinding] = Field(default_factory=list)
    """The drafting task's judges (per evaluated model) that gave one value to every draft."""
    panels: list[PanelBlock | PanelNote] = Field(default_factory=list)
    """The drafting task's judges on the same drafts."""


class CalibrateSummary(RunSummary):
    """``calibration``: a ``CalibrationReport`` (``report``) with figure data, or the
    preference- or behaviour-agreement part."""

    kind: Literal["calibration"] = "calibration"
    calibration: CalibrationBlock
    label_weighting: str | None = None
    """The one-line statement that the human labels, drawn with unequal inclusion
    probabilities (``annotate sample --by model|score``), were weighted by 1 / probability (or,
    for preference and behaviour agreement, that they were not); ``None``: equal or no
    probabilities."""
    fitted_check: FittedCheck | None = None
    """The judge is an aligned or calibrated judge fitted on some of the labelled items (its
    agreement on them is not held out: the held-out-only figures beside the overall ones), or
    the check could not be made (a judgments file outside its run directory)."""


class ValidateSummary(RunSummary):
    """``validate``: a judge's agreement with a shipped set's people."""

    kind: Literal["validate"] = "validate"
    validation: ValidationInfo
    """The set, the judge, counts, ``B``, ``seed`` and notes."""
    degenerate: list[DegenerateFinding] = Field(default_factory=list)
    """Criteria on which the validated judge gave one value to every item (see
    :class:`DegenerateFinding`)."""
    calibration: CalibrationBlock | None = None
    """The ``CalibrationReport`` and figure data (absent without a usable judgment)."""
    baselines: BaselinesBlock | None = None
    recorded_judges: list[JudgeRow] | None = None
    calibrated: CalibratedBlock | None = None
    """The shipped calibration head's rows beside the uncalibrated judge (the embedded
    judge on a set a head was fitted on; :mod:`attune_judge.align`'s calibrate method)."""
    fitted_check: FittedCheck | None = None
    """The judge (``--judge DIR``) was fitted on some of the items judged: the warning and its
    held-out-only figures beside the overall ones."""


class DemoSummary(RunSummary):
    """``demo``: the parts run and their results (recorded judges, DUO, local judge, ...)."""

    kind: Literal["demo"] = "demo"
    parts: list[str]
    B: int
    seed: int
    recorded_judges: list[JudgeRow] | None = None
    duo: DuoResult | None = None
    local_judge: ValidationResult | None = None
    sensitivity: SensitivityBlock | None = None
    sensitivity_notes: list[str] | None = None


class PpiSummary(RunSummary):
    """``ppi``: a prediction-powered leaderboard (``rank --human``)."""

    kind: Literal["ppi"] = "ppi"
    ppi: PpiBlock
    label_weighting: str | None = None
    """The one-line statement that the human labels, drawn with unequal inclusion
    probabilities (``annotate sample --by model|score``), were weighted by 1 / probability;
    ``None``: equal or no probabilities."""


class ControlledBlock(_Record):
    """A ranking with style under control (``rank --control`` / ``rank --pairs``): one of
    the three fits, raw beside controlled in each."""

    winrates: LengthControlledResult | None = None
    """Length-controlled win rates against one baseline (AlpacaEval's GLM)."""
    style: StyleControlledResult | None = None
    """Style-controlled Bradley–Terry strengths and style coefficients."""
    means: LengthControlledMeans | None = None
    """Length-controlled means of a rated run."""
    source: str
    """What was ranked (file or run directory)."""


class ControlledSummary(RunSummary):
    """``controlled``: a ranking with length (and style) under control."""

    kind: Literal["controlled"] = "controlled"
    controlled: ControlledBlock


class AlignSummary(RunSummary):
    """``align``: the aligned judge's artifact manifest and its held-out proof."""

    kind: Literal["align"] = "align"
    align: AlignBlock


SUMMARY_MODELS: dict[str, type[RunSummary]] = {
    "score": ScoreSummary,
    "calibration": CalibrateSummary,
    "validate": ValidateSummary,
    "sensitivity": SensitivitySummary,
    "bench": BenchSummary,
    "demo": DemoSummary,
    "ppi": PpiSummary,
    "align": AlignSummary,
    "controlled": ControlledSummary,
}
"""``kind`` → summary model."""


def parse_summary(data: dict[str, Any]) -> RunSummary:
    """The typed summary of a ``summary.json`` object, by its ``kind``.

    Raises
    ------
    ValueError
        An unknown ``kind``, or (``pydantic.ValidationError``) a summary that does not have
        its kind's layout.

    Examples
    --------
    >>> s = parse_summary({"kind": "calibration", "calibration": {}})
    >>> type(s).__name__, s.schema_version
    ('CalibrateSummary', 2)
    """
    kind = str(data.get("kind", "score"))
    if kind not in SUMMARY_MODELS:
        raise ValueError(f"unknown summary kind {kind!r}; known: {', '.join(SUMMARY_MODELS)}")
    return SUMMARY_MODELS[kind].model_validate(data)
