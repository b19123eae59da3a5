"""Typed records of a run directory's ``summary.json``, one model per run kind.

Every summary carries ``schema_version`` (:data:`SCHEMA_VERSION`) and ``kind`` (absent in a
scoring run's summary: ``score`` is the default). The models type what every reader relies on
(the run facts, the scoring blocks per judge and model) and keep each kind's analysis block
as the JSON its owning layer writes (``calibration``, ``bench``, ``sensitivity``, ...);
unknown keys are kept (``extra="allow"``), so a newer writer's additions survive a read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from attune_judge._schema_version import SCHEMA_VERSION

__all__ = [
    "ALIGN_KIND",
    "SCHEMA_VERSION",
    "SUMMARY_MODELS",
    "BenchSummary",
    "CalibrateSummary",
    "DegenerateFinding",
    "DemoSummary",
    "JudgeBlock",
    "ModelBlock",
    "PpiSummary",
    "RunFacts",
    "RunSummary",
    "ScoreInterval",
    "ScoreSummary",
    "SensitivitySummary",
    "ValidateSummary",
    "parse_summary",
]


ALIGN_KIND = "align"
"""Reserved ``kind`` of an ``align`` run: its model joins :data:`SUMMARY_MODELS` when the
align command stores a summary (until then such a summary is read as :class:`RunSummary`)."""


class RunSummary(BaseModel):
    """What every ``summary.json`` has: its layout version and its kind."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    """Layout version (summaries written before versioning are read as version 1)."""
    kind: str = "score"
    """The run kind (``score`` when absent: the runner's summary of a scoring run)."""


class ScoreInterval(BaseModel):
    """A model's normalised-score mean with its paired cluster-bootstrap interval."""

    model_config = ConfigDict(extra="allow")

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


class ModelBlock(BaseModel):
    """Per judge and candidate model: what was planned, judged, failed, and the scores."""

    model_config = ConfigDict(extra="allow")

    n_planned: int
    n_judged: int
    n_ok: int
    n_by_status: dict[str, int]
    """Every planned judgment under one of ok, parse_error, lm_error, refused, missing."""
    score: ScoreInterval | None = None
    overall_mean: float | None = None
    criteria_means: dict[str, float | None] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    cost_usd: float | None = None
    n_cost_known: int = 0
    latency_s_mean: float | None = None
    retries: int = 0


class DegenerateFinding(BaseModel):
    """A judge whose scores carry no information (``attune_judge.runner._degenerate``)."""

    model_config = ConfigDict(extra="allow")

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


class JudgeBlock(BaseModel):
    """Per judge (``judge_id``): a label and a :class:`ModelBlock` per candidate model."""

    model_config = ConfigDict(extra="allow")

    label: str
    models: dict[str, ModelBlock]
    pairwise: dict[str, Any] | None = None
    """A pairwise judge's verdict counts, position bias and per-pair results."""
    degenerate: list[DegenerateFinding] = Field(default_factory=list)
    """Criteria on which the judge gave one value to every item, or the judge as a whole when
    its scores only follow the criterion order (empty: informative)."""


class RunFacts(BaseModel):
    """The runner's facts about the run (``run``): tasks, statuses, completeness, timing."""

    model_config = ConfigDict(extra="allow")

    n_tasks: int
    n_by_status: dict[str, int]
    complete: bool


class ScoreSummary(RunSummary):
    """``score``: per judge and model, counts by status and scores with intervals."""

    kind: Literal["score"] = "score"
    run: RunFacts
    judges: dict[str, JudgeBlock]


class SensitivitySummary(RunSummary):
    """``sensitivity``: the runner's blocks for every variant's judge plus the study."""

    kind: Literal["sensitivity"]
    run: RunFacts
    judges: dict[str, JudgeBlock]
    sensitivity: dict[str, Any]
    """Variants, leaderboards, τ, flips, verdicts, variance (``sensitivity/_summary.py``)."""


class BenchSummary(RunSummary):
    """``bench``: the run facts and the per-task analysis (``tasks/_analysis.py``)."""

    kind: Literal["bench"]
    run: dict[str, Any] = Field(default_factory=dict)
    bench: dict[str, Any]
    degenerate: list[DegenerateFinding] = Field(default_factory=list)
    """The drafting task's judges (per evaluated model) that gave one value to every draft."""


class CalibrateSummary(RunSummary):
    """``calibration``: a ``CalibrationReport`` dump (``report``) with figure data, or the
    preference-agreement block of pairwise data."""

    kind: Literal["calibration"]
    calibration: dict[str, Any]


class ValidateSummary(RunSummary):
    """``validate``: a judge's agreement with a shipped set's people."""

    kind: Literal["validate"]
    degenerate: list[DegenerateFinding] = Field(default_factory=list)
    """Criteria on which the validated judge gave one value to every item (see
    :class:`DegenerateFinding`)."""


class DemoSummary(RunSummary):
    """``demo``: the parts run and their results (recorded judges, DUO, local judge, ...)."""

    kind: Literal["demo"]
    parts: list[str]
    B: int
    seed: int
    recorded_judges: list[dict[str, Any]] | None = None
    duo: dict[str, Any] | None = None
    local_judge: dict[str, Any] | None = None


class PpiSummary(RunSummary):
    """``ppi``: a prediction-powered leaderboard (``rank --human``)."""

    kind: Literal["ppi"]
    ppi: dict[str, Any]


SUMMARY_MODELS: dict[str, type[RunSummary]] = {
    "score": ScoreSummary,
    "calibration": CalibrateSummary,
    "validate": ValidateSummary,
    "sensitivity": SensitivitySummary,
    "bench": BenchSummary,
    "demo": DemoSummary,
    "ppi": PpiSummary,
}
"""``kind`` → summary model (``align``: see :data:`ALIGN_KIND`)."""


def parse_summary(data: dict[str, Any]) -> RunSummary:
    """The typed summary of a ``summary.json`` object, by its ``kind``.

    Raises
    ------
    pydantic.ValidationError
        When the summary does not have its kind's layout.

    Examples
    --------
    >>> s = parse_summary({"kind": "ppi", "ppi": {"models": []}})
    >>> type(s).__name__, s.schema_version
    ('PpiSummary', 1)
    >>> type(parse_summary({"kind": "align", "align": {}})).__name__
    'RunSummary'
    """
    model = SUMMARY_MODELS.get(str(data.get("kind", "score")), RunSummary)
    return model.model_validate(data)
