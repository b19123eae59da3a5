"""An Inspect AI scorer as the judge of ``calibrate`` and ``rank`` (the ``inspect`` extra).

The scorers' scores are read as Judgment records by
:func:`attune_judge.data.adapters.inspect_judgments` (judge id ``inspect:<scorer>``). Several
scorers are a panel: each is its own judge, and when every one of them scores on 0-1 (grades,
booleans, accuracies) their mean is one more judge, the jury ``inspect:jury``.
Human labels are joined by item id (the sample id; see the adapter): a label that names no
sample of the log is an error, not a silently smaller join.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Sequence
from pathlib import Path

from attune_judge.data import Judgment
from attune_judge.data.adapters import inspect_judgments, scorer_judge_id
from attune_judge.errors import UserError

__all__ = ["JURY_ID", "check_labels_name_samples", "inspect_judge_id", "scorer_judgments"]

JURY_ID = "inspect:jury"
"""The judge id of the mean of several 0-1 scorers."""

_SHOWN = 3


def _jury(judgments: Sequence[Judgment], scorers: Sequence[str]) -> list[Judgment]:
    """One judgment per item: the mean of the scorers' 0-1 scores that item got (members'
    failures left out and counted; no member score: the first member's failure)."""
    by_item: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_item.setdefault(j.item_id, []).append(j)
    out = []
    for item_id, members in by_item.items():
        ok = [m for m in members if m.status == "ok" and m.normalized is not None]
        first = members[0]
        common = {
            "item_id": item_id,
            "judge_id": JURY_ID,
            "conversation_id": first.conversation_id,
            "candidate_model": first.candidate_model,
            "details": {
                "method": "mean",
                "scorers": list(scorers),
                "members": [
                    m.model_dump(include={"judge_id", "status", "overall"}) for m in members
                ],
                "failed": len(members) - len(ok),
            },
        }
        if not ok:
            out.append(Judgment(**common, status=first.status, error=first.error))
            continue
        mean = statistics.fmean(m.normalized for m in ok if m.normalized is not None)
        out.append(Judgment(**common, overall=mean, normalized=mean))
    return out


def scorer_judgments(log: Path, scorers: Sequence[str] | None = None) -> list[Judgment]:
    """The chosen scorers' judgments of an Inspect log, plus the jury when there are several
    scorers and all score on 0-1."""
    judgments, names = inspect_judgments(log, scorers)
    if len(names) > 1:
        per_scorer = {n: [j for j in judgments if j.judge_id == scorer_judge_id(n)] for n in names}
        if all(any(j.normalized is not None for j in js) for js in per_scorer.values()):
            judgments = judgments + _jury(judgments, names)
    return judgments


def inspect_judge_id(log: Path, judgments: Sequence[Judgment], scorer: str | None) -> str:
    """The judge ``rank`` ranks by: ``--scorer``'s, the only scorer's, or the jury's."""
    ids = sorted({j.judge_id for j in judgments})
    if scorer is not None:
        return JURY_ID if scorer == "jury" and JURY_ID in ids else scorer_judge_id(scorer)
    if len(ids) == 1:
        return ids[0]
    if JURY_ID in ids:
        return JURY_ID
    names = ", ".join(i.removeprefix("inspect:") for i in ids)
    raise UserError(
        f"{log}: several scorers ({names}) on different scales and no jury; choose one with "
        "--scorer"
    )


def check_labels_name_samples(
    human: Path, label_ids: Collection[str], judgments: Sequence[Judgment], log: Path
) -> None:
    """Every human label names a sample of the log (by item id), else one line naming them."""
    samples = {j.item_id for j in judgments}
    stray = sorted(set(label_ids) - samples)
    if not stray:
        return
    examples = ", ".join(map(repr, stray[:_SHOWN]))
    ids = ", ".join(map(repr, sorted(samples)[:_SHOWN]))
    raise UserError(
        f"{human}: {len(stray)} of {len(set(label_ids))} labelled item ids match no sample of "
        f"the Inspect log {log} (e.g. {examples}); its sample ids are like {ids}"
    )
