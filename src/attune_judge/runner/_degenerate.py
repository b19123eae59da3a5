"""Degenerate judges: scores that carry no information about the items.

A judge is degenerate on a criterion when it gives **one value to every item** it judged ok
(``constant``), and as a whole when every answer just **counts the criteria off in order** —
the first criterion 1, the second 2, ... (or 0, 1, ...) — whatever the item
(``criterion_order``). Its means, intervals and agreement figures are then artefacts: the
commands print a warning and the summary (``degenerate`` of a judge block,
:class:`attune_judge.runs.DegenerateFinding`) and the report mark it.

In expected-score mode a criterion is also flagged (``off_scale``) when on most of its ok
answers more than :data:`~attune_judge.judges.WARN_OUT_OF_SCALE` of the answer token's
probability lay outside the scale's tokens: its scores are read from the small share the model
put on the levels (as decoding restricted to them would), which says little.

Fewer than :data:`MIN_ITEMS` ok answers are too few to tell a constant judge from chance.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attune_judge.data import Judgment
from attune_judge.judges import WARN_OUT_OF_SCALE
from attune_judge.runs import JudgeBlock

__all__ = [
    "MIN_ITEMS",
    "degenerate_findings",
    "degenerate_judgments",
    "degenerate_warnings",
    "off_scale_findings",
]

MIN_ITEMS = 5
"""Fewest ok answers on which a constant criterion is called degenerate."""

Answer = Mapping[str, float | int | str | bool | None]


def _same(value: Any) -> Any:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _counts_off(answer: Answer) -> int | None:
    """The start (0 or 1) when ``answer``'s values are start, start+1, ... in criterion order."""
    values = list(answer.values())
    if len(values) < 2 or not all(isinstance(v, int | float) for v in values):
        return None
    for start in (1, 0):
        if all(math.isclose(float(v), start + i) for i, v in enumerate(values)):  # type: ignore[arg-type]
            return start
    return None


def degenerate_findings(
    answers: Sequence[Answer], *, min_items: int = MIN_ITEMS
) -> list[dict[str, Any]]:
    """Findings for one judge's ok answers (criterion → value, in the rubric's order).

    >>> degenerate_findings([{"empathy": 3, "clarity": 3 + i % 2} for i in range(6)])[0]["reason"]
    'constant'
    >>> degenerate_findings([{"a": 1, "b": 2, "c": 3}] * 5)[0]["reason"]
    'criterion_order'
    >>> degenerate_findings([{"a": 3}] * 4)  # too few to tell
    []
    """
    answers = [a for a in answers if a]
    if len(answers) < min_items:
        return []
    starts = {_counts_off(a) for a in answers}
    start = next(iter(starts)) if len(starts) == 1 else None
    if start is not None:
        names = list(answers[0])
        return [
            {
                "criterion": None,
                "reason": "criterion_order",
                "value": None,
                "n": len(answers),
                "message": (
                    f"every answer scores the criteria in their order ({', '.join(names)} = "
                    f"{', '.join(str(start + i) for i in range(len(names)))}), "
                    f"on all {len(answers)} items: the scores carry no information"
                ),
            }
        ]
    values: dict[str, list[Any]] = defaultdict(list)
    for answer in answers:
        for name, value in answer.items():
            if value is not None:
                values[name].append(_same(value))
    out = []
    for name, seen in values.items():
        distinct = set(seen)
        if len(seen) >= min_items and len(distinct) == 1:
            (value,) = distinct
            shown = int(value) if isinstance(value, float) and value.is_integer() else value
            out.append(
                {
                    "criterion": name,
                    "reason": "constant",
                    "value": shown,
                    "n": len(seen),
                    "message": (
                        f"gives {shown!r} on {name!r} to every one of {len(seen)} items: "
                        "this criterion carries no information"
                    ),
                }
            )
    return out


def _answer(j: Judgment) -> dict[str, Any]:
    """A judgment's answer: its verdict (pairwise: every verdict, ``inconsistent`` included,
    so one verdict is constant only when every pair got it), else its criterion scores or
    overall."""
    if j.verdict is not None:
        return {"verdict": j.verdict}
    if j.scores:
        return dict(j.scores)
    return {"overall": j.overall} if j.overall is not None else {}


def off_scale_findings(judgments: Sequence[Judgment]) -> list[dict[str, Any]]:
    """``off_scale`` findings: criteria whose answer-token probability lay mostly outside the
    scale (more than ``WARN_OUT_OF_SCALE``) on more than half of the ok answers.

    >>> def j(out): return Judgment(item_id="i", judge_id="j",
    ...     details={"distributions": {"fit": {"out_of_scale": out}}})
    >>> [f["reason"] for f in off_scale_findings([j(0.6), j(0.7), j(0.1)])]
    ['off_scale']
    >>> off_scale_findings([j(0.6), j(0.1)])  # half is not most
    []
    """
    shares: dict[str, list[float]] = defaultdict(list)
    for j in judgments:
        for name, dist in ((j.details or {}).get("distributions") or {}).items():
            if isinstance(dist, Mapping) and isinstance(dist.get("out_of_scale"), int | float):
                shares[name].append(float(dist["out_of_scale"]))
    out = []
    for name, seen in shares.items():
        high = sum(s > WARN_OUT_OF_SCALE for s in seen)
        if 2 * high > len(seen):
            ordered = sorted(seen)
            median = ordered[len(ordered) // 2]
            out.append(
                {
                    "criterion": name,
                    "reason": "off_scale",
                    "value": round(median, 3),
                    "n": len(seen),
                    "message": (
                        f"puts more than {WARN_OUT_OF_SCALE:.0%} of its answer-token probability "
                        f"outside the scale on {name!r} in {high} of {len(seen)} items (median "
                        f"{median:.2f}): its scores come from the small share left on the levels"
                    ),
                }
            )
    return out


def degenerate_judgments(
    judgments: Iterable[Judgment], *, min_items: int = MIN_ITEMS
) -> list[dict[str, Any]]:
    """:func:`degenerate_findings` and :func:`off_scale_findings` of one judge's ``ok``
    judgments."""
    ok = [j for j in judgments if j.status == "ok"]
    found = degenerate_findings([_answer(j) for j in ok], min_items=min_items)
    return found + off_scale_findings(ok)


def degenerate_warnings(judges: Mapping[str, JudgeBlock]) -> list[str]:
    """``warning: ...`` lines for the ``degenerate`` findings of summary judge blocks."""
    return [
        f"warning: degenerate judge {block.label or jid} ({jid}): {f.message}"
        for jid, block in judges.items()
        for f in block.degenerate
    ]
