"""A judge's preference agreement beside two baselines that need no judge at all.

- ``length-only``: the longer response wins (equal length: tie). Judges are known to favour
  length; if this baseline agrees with people as well as the judge, the judge adds nothing.
- ``position-only``: the response labelled ``A`` (shown first) always wins.

Each rater (judge and baselines) is compared with the participants in three ways, all on the
same comparisons and with cluster-bootstrap intervals over conversations:

- agreement over three classes (A / B / tie; a tie agrees only with a tie),
- Cohen's κ over A / B / tie,
- accuracy excluding ties (comparisons where either side said tie are left out).
"""

from __future__ import annotations

from collections.abc import Sequence

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.preference._preference import (
    PreferenceAgreement,
    preference_agreement,
)
from attune_judge.data import Preference
from attune_judge.errors import UserError

__all__ = [
    "PreferenceComparison",
    "PreferenceRow",
    "baseline_preferences",
    "compare_preferences",
]

BASELINES = ("length-only", "position-only")


class PreferenceRow(ResultModel):
    """One rater's agreement with the participants."""

    rater: str
    """``judge``, ``length-only`` or ``position-only``."""
    three_class: Metric
    """Share of comparisons with the same label (A / B / tie)."""
    kappa: Metric | None
    """Cohen's κ over A / B / tie."""
    excluding_ties: Metric | None
    """Accuracy on the comparisons where neither side is a tie (``None``: none left)."""
    n_compared: int
    """Comparisons in the three-class agreement."""
    n_excluding_ties: int
    """Comparisons left once ties are excluded."""


class PreferenceComparison(ResultModel):
    """The judge's row and the baselines' rows, on the same comparisons."""

    rows: list[PreferenceRow]
    """``judge`` first, then the baselines that could be computed."""
    notes: list[str]
    """Why a baseline is missing (e.g. no texts for the length baseline)."""


def baseline_preferences(human: Sequence[Preference], kind: str) -> list[Preference]:
    """The baseline's verdicts on the participants' comparisons (same item ids).

    ``length-only`` needs both texts of a comparison (others are skipped).
    """
    out = []
    for p in human:
        if kind == "position-only":
            winner = "A"
        elif kind == "length-only":
            if p.text_a is None or p.text_b is None:
                continue
            la, lb = len(p.text_a), len(p.text_b)
            winner = "A" if la > lb else "B" if lb > la else "tie"
        else:
            raise ValueError(f"unknown baseline {kind!r}; choose from {BASELINES}")
        out.append(p.model_copy(update={"winner": winner, "rater": kind, "rater_group": "judge"}))
    return out


def _row(
    rater: str, human: Sequence[Preference], judge: Sequence[Preference], **kw: object
) -> PreferenceRow:
    strict: PreferenceAgreement = preference_agreement(human, judge, tie_policy="strict", **kw)  # type: ignore[arg-type]
    try:
        excl: PreferenceAgreement | None = preference_agreement(
            human,
            judge,
            tie_policy="exclude",
            **kw,  # type: ignore[arg-type]
        )
    except UserError:  # every comparison had a tie on one side
        excl = None
    return PreferenceRow(
        rater=rater,
        three_class=strict.overall,
        kappa=strict.kappa,
        excluding_ties=excl.overall if excl is not None else None,
        n_compared=strict.n_compared,
        n_excluding_ties=excl.n_compared if excl is not None else 0,
    )


def compare_preferences(
    human: Sequence[Preference],
    judge: Sequence[Preference],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> PreferenceComparison:
    """The judge and the two baselines against the participants, on the judged comparisons.

    The baselines are scored on exactly the comparisons the judge answered, so the rows are
    comparable; each uses the same bootstrap seed (the same conversation draws).
    """
    judged = {p.item_id for p in judge if p.winner is not None}
    common = [p for p in human if p.item_id in judged and p.winner is not None]
    if not common:
        raise UserError("no comparison has an answer from both the participants and the judge")
    kw = {"B": B, "level": level, "seed": seed, "method": method}
    rows = [_row("judge", common, judge, **kw)]
    notes: list[str] = []
    for kind in BASELINES:
        verdicts = baseline_preferences(common, kind)
        if not verdicts:
            notes.append(f"{kind}: no comparison has both texts")
            continue
        rows.append(_row(kind, common, verdicts, **kw))
    return PreferenceComparison(rows=rows, notes=notes)
