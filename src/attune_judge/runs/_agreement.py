"""Typed ``calibration`` block of ``summary.json`` (``calibrate``, ``validate``): a judge's
agreement with people, built on the calibration layer's own results (``CalibrationReport``,
``Metric``, ``JoinReport``) plus the figure data a report draws from the ratings.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from attune_judge.calibration import BinaryAgreement, CalibrationReport, JoinReport, Metric
from attune_judge.runs._study import _Record

__all__ = [
    "AgreementMatrix",
    "CalibrationBlock",
    "CalibrationCurve",
    "CalibrationPart",
    "Confusion",
    "Disagreement",
    "FittedCheck",
    "HeldOutRow",
]


class AgreementMatrix(_Record):
    """Rater × rater point estimates of one agreement metric (judges listed in ``judges``)."""

    raters: list[str]
    matrix: list[list[float | None]]
    metric: str = "agreement"
    judges: list[str] = Field(default_factory=list)
    ceiling: float | None = None
    """The mean leave-one-out human ceiling of the same metric, when known."""


class Confusion(_Record):
    """Counts of (human label, judge label), rows the human's."""

    categories: list[str]
    counts: list[list[int]]
    human_label: str = "human label"
    judge_label: str = "judge label"


class CalibrationCurve(_Record):
    """The mean human label at each judge score."""

    judge_scores: list[float]
    human_means: list[float | None]
    counts: list[int]
    lower: list[float | None] | None = None
    upper: list[float | None] | None = None
    identity: bool = False
    """Judge and humans on the same scale (the identity line is drawn)."""


class Disagreement(_Record):
    """One item where the judge and the people's aggregate differ (``calibrate``'s report lists
    the largest; ``attune-judge view`` opens each one)."""

    item_id: str
    judge: float
    humans: float
    """The people's per-item aggregate (the confusion table's)."""
    difference: float
    """``|judge − humans|``."""


class CalibrationPart(_Record):
    """One plain part of a calibration: metrics, join, heatmap, confusion, curve, pass/fail
    figures."""

    metrics: dict[str, Metric] | None = None
    """``label → Metric``."""
    join: JoinReport | None = None
    agreement_matrix: AgreementMatrix | None = None
    confusion: Confusion | None = None
    calibration_curve: CalibrationCurve | None = None
    binary: list[BinaryAgreement] | None = None
    """A pass/fail judge's TPR, TNR, precision, NPV, balanced accuracy and leniency with their
    intervals, per scope (all items, each category, each item)."""
    disagreements: list[Disagreement] | None = None
    """The items with the largest ``|judge − humans|`` (numeric labels; at most
    :data:`attune_judge.report.WORST_ITEMS`, largest first, ties by item id)."""


class CalibrationBlock(CalibrationPart):
    """A judge against people: a ``CalibrationReport`` (``report``) with figure data per
    dimension (``figures``), or the preference- or behaviour-agreement part (``metrics``,
    ``join``, ``confusion``; ``view`` the behaviour view)."""

    report: CalibrationReport | None = None
    figures: dict[str, CalibrationPart] = Field(default_factory=dict)
    """``dimension → part`` (from ``attune_judge.report.calibration_figure_data``)."""
    view: str | None = None
    warnings: list[str] = Field(default_factory=list)
    """Caveats of the preference or behaviour part's intervals (too few conversations); a
    ``report`` carries its own (``flags``)."""


class HeldOutRow(_Record):
    """One statistic of a judge against the people on one dimension: on every item compared
    and on the items the judge was not fitted on."""

    dimension: str
    judge: str
    metric: str
    """``spearman`` and ``cohen_kappa_quadratic`` (categorical values: ``cohen_kappa`` and
    ``raw_agreement``)."""
    overall: Metric
    """On every item compared (the figure of the main table)."""
    held_out: Metric | None = None
    """On the held-out items only, with its interval (``None``: not computable there)."""


class FittedCheck(_Record):
    """The check that the judge compared with people (an aligned or calibrated judge, from
    ``attune-judge align``) was not fitted on their labels: its train/dev split against the
    items compared (``calibrate``, ``validate``; ``rank --human`` warns the same way)."""

    status: Literal["overlap", "skipped"]
    """``overlap``: some items compared are in the judge's train/dev split (its agreement on
    them is not held out); ``skipped``: the check could not be made (``message`` says why)."""
    message: str
    """The warning or the statement that the check was skipped, as printed."""
    artifact: str | None = None
    """The judge's directory (``aligned-judge.json``, ``split.json``)."""
    n_items: int | None = None
    """Items compared (labelled by people and judged)."""
    n_fitted: int | None = None
    """Of them, items in the judge's train/dev split."""
    n_held_out_conversations: int | None = None
    """Conversations (clusters) of the other items."""
    held_out: list[HeldOutRow] = Field(default_factory=list)
    """The headline statistics on all items and on the held-out ones only, side by side."""
    held_out_note: str | None = None
    """Why there are no held-out figures (too few held-out items), or their caveat (too few
    conversations for reliable intervals)."""
