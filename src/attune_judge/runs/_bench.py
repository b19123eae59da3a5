"""Typed ``bench`` block of ``summary.json``: per task, every metric per model with its
interval, the primary metric's leaderboard and discriminability, and how the task rankings
agree (Kendall τ-b between tasks, Kendall's W) — the statistics layer's ``Metric`` and
``KendallW`` results, computed by ``attune_judge.tasks`` on one shared cluster draw.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from attune_judge.calibration import KendallW, Metric
from attune_judge.runs._study import TauMatrix, _Record


def _named(value: Any) -> Any:
    """Summaries written before this block was typed stored an undefined metric without its
    ``name`` (``{"estimate": null, "undefined_reason": ...}``): read it as unnamed."""
    return {"name": "", **value} if isinstance(value, dict) and "name" not in value else value


AnyMetric = Annotated[Metric, BeforeValidator(_named)]
"""A ``Metric``, also as older bench summaries stored an undefined one."""

__all__ = [
    "BenchBlock",
    "BenchBootstrap",
    "BenchLeaderboard",
    "BenchMetric",
    "BenchRow",
    "BenchTask",
    "Discriminability",
    "TauRow",
]


class BenchBootstrap(_Record):
    """The one paired cluster draw shared by every model and task."""

    B: int
    seed: int
    level: float
    scheme: str
    n_conversations: int
    note: str


class BenchMetric(_Record):
    """One metric of a task: its direction and each model's value with its interval."""

    higher_is_better: bool
    models: dict[str, AnyMetric]


class BenchRow(_Record):
    """A leaderboard row: rank sets with two or more models and conversations, else the point
    rank only."""

    model: str
    score: Metric
    rank: int | None
    """Point rank (1 = best); ``None``: the model has no score."""
    rank_set_simultaneous: tuple[int, int] | None = None
    rank_set_marginal: tuple[int, int] | None = None
    p_rank_1: float | None = None
    no_rank_claim: str | None = None
    """Why the model makes no rank claim (no valid interval:
    :func:`~attune_judge.calibration.no_claim_reason`); its rank set is not shown."""


class BenchLeaderboard(_Record):
    """The models ranked on a task's primary metric (``rank_claims`` false: too few
    conversations for a rank claim, ``warnings`` say so)."""

    rows: list[BenchRow]
    warnings: list[str] = Field(default_factory=list)
    rank_claims: bool = True


class Discriminability(_Record):
    """How far apart a task puts the models relative to its uncertainty."""

    spread: float | None
    mean_interval_width: float | None
    spread_over_width: float | None
    n_model_pairs: int
    n_pairs_separated: int
    share_pairs_separated: float | None


class BenchTask(_Record):
    """One task: units by status, every metric, and the primary metric's ranking."""

    primary_metric: str
    units_by_status: dict[str, dict[str, int]]
    metrics: dict[str, BenchMetric]
    leaderboard: BenchLeaderboard | None = None
    score_label: str | None = None
    xlim: tuple[float, float] | None = None
    discriminability: Discriminability | None = None
    pooled_binary: dict[str, dict[str, dict[str, Metric]]] | None = None
    """Behaviour: target → model → ``f1`` / ``mcc`` from pooled confusion counts."""
    win_count_tau: dict[str, AnyMetric] | None = None
    """Preference: τ-b of each model's win counts against the people's."""


class TauRow(_Record):
    """τ-b of one task's ranking against the first task's."""

    label: str
    tau: AnyMetric


class BenchBlock(_Record):
    """A bench run's analysis (``attune_judge.tasks.analyse_records``)."""

    bootstrap: BenchBootstrap
    models: list[str]
    tasks: dict[str, BenchTask] = Field(default_factory=dict)
    tau_matrix: TauMatrix | None = None
    tau_intervals: dict[str, dict[str, AnyMetric]] | None = None
    against: str | None = None
    """The task the others' rankings are compared with (``taus``)."""
    taus: list[TauRow] | None = None
    kendall_w: KendallW | None = None
    kendall_w_interval: Metric | None = None
    kendall_w_tasks: list[str] | None = None
