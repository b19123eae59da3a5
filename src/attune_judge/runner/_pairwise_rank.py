"""Ranking the replies a pairwise judge compared: Bradley–Terry on its reconciled verdicts.

A pairwise judgment's score (``a_win``) only says whether the first-listed reply won, so a
pairwise run has no per-model mean leaderboard. What it can rank are the compared options (the
response labels ``original`` / ``human_edited`` / ..., or candidate models and ``reference``):
each ok judgment's reconciled verdict is one comparison of ``details["option_a"]`` against
``details["option_b"]``, a ``tie`` is half a win for each side, and an ``inconsistent`` verdict
(opposite winners in the two orders) counts as a tie, as in ``calibrate``: the judge could not
separate them. :func:`attune_judge.calibration.bradley_terry` fits the strengths with a
cluster bootstrap over conversations and rank sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from attune_judge.calibration import bradley_terry
from attune_judge.data import Judgment
from attune_judge.errors import UserError
from attune_judge.runs import JudgedSummary, read_summary

if TYPE_CHECKING:
    from attune_judge.calibration import BradleyTerryResult

__all__ = ["PairwiseRanking", "pairwise_outcomes", "pairwise_ranking", "run_pairwise_ranking"]

_WINNER = {"A": "A", "B": "B", "tie": "tie", "inconsistent": "tie"}


def pairwise_outcomes(
    judgments: Sequence[Judgment],
) -> tuple[list[str], list[str], list[str], list[str]]:
    """``(option_a, option_b, winner, cluster)`` of the ok judgments with a verdict and
    option names (``inconsistent`` as ``tie``)."""
    a: list[str] = []
    b: list[str] = []
    w: list[str] = []
    c: list[str] = []
    for j in judgments:
        winner = _WINNER.get(str(j.verdict))
        oa, ob = j.details.get("option_a"), j.details.get("option_b")
        if j.status != "ok" or winner is None or not isinstance(oa, str) or not isinstance(ob, str):
            continue
        a.append(oa)
        b.append(ob)
        w.append(winner)
        c.append(j.conversation_id or j.item_id)
    return a, b, w, c


def _components(a: Sequence[str], b: Sequence[str]) -> list[list[str]]:
    """Groups of options linked by comparisons (sorted; each group sorted)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(a, b, strict=True):
        parent[root(x)] = root(y)
    groups: dict[str, list[str]] = {}
    for x in sorted(parent):
        groups.setdefault(root(x), []).append(x)
    return sorted(groups.values())


class PairwiseRanking(NamedTuple):
    """The Bradley–Terry fit of one group of options compared with each other."""

    options: list[str]
    """The group's options (sorted)."""
    result: BradleyTerryResult | None
    """The fit, or ``None`` when it has no estimate (``note`` says why)."""
    note: str | None = None
    """Why there is no fit."""

    def as_json(self) -> dict[str, Any]:
        """JSON-ready form (as stored in ``summary.json``)."""
        fit = None if self.result is None else self.result.model_dump(mode="json")
        return {"options": self.options, "bradley_terry": fit, "note": self.note}


def pairwise_ranking(
    judgments: Sequence[Judgment], *, B: int, seed: int, level: float
) -> list[PairwiseRanking]:
    """Bradley–Terry strengths of the compared options (see the module docstring), one fit per
    group of options that were compared with each other (e.g. the participants' comparisons
    of ``original`` / ``human_edited`` and candidate pairs with ``reference`` are two groups:
    no comparison links them, so their strengths are not on one scale).

    A group without an estimate (an option that never lost or never won against the rest,
    the message names it) has ``result=None`` and its ``note``.

    Raises
    ------
    UserError
        No judgment names its two options.
    """
    a, b, w, c = pairwise_outcomes(judgments)
    if not a:
        raise UserError(
            "no pairwise verdict names its two options (details.option_a/option_b; runs "
            "written before they were kept): re-run score into a new directory"
        )
    out = []
    for group in _components(a, b):
        keep = [i for i, x in enumerate(a) if x in group]
        try:
            fit = bradley_terry(
                [a[i] for i in keep],
                [b[i] for i in keep],
                [w[i] for i in keep],
                [c[i] for i in keep],
                B=B,
                seed=seed,
                level=level,
            )
        except UserError as exc:
            out.append(PairwiseRanking(group, None, str(exc)))
        else:
            out.append(PairwiseRanking(group, fit))
    return out


def _stored(
    run_dir: Path, judge_id: str, *, B: int, seed: int, level: float
) -> list[PairwiseRanking] | None:
    summary = read_summary(run_dir)
    block = summary.judges.get(judge_id) if isinstance(summary, JudgedSummary) else None
    pairwise = None if block is None else block.pairwise
    if pairwise is None or pairwise.rankings is None or pairwise.ranking_settings is None:
        return None
    settings = pairwise.ranking_settings
    if (settings.B, settings.seed, settings.level) != (B, seed, level):
        return None
    return [PairwiseRanking(r.options, r.bradley_terry, r.note) for r in pairwise.rankings]


def run_pairwise_ranking(
    run_dir: Path | str,
    judgments: Sequence[Judgment],
    judge_id: str,
    *,
    B: int,
    seed: int,
    level: float,
) -> list[PairwiseRanking]:
    """The rankings stored in the run's ``summary.json`` when they have these settings, else
    fitted from ``judgments`` (one judge's judgments of that run)."""
    stored = _stored(Path(run_dir), judge_id, B=B, seed=seed, level=level)
    if stored is not None:
        return stored
    return pairwise_ranking(judgments, B=B, seed=seed, level=level)
