"""The ``pairwise`` block of a judge in ``summary.json`` (pairwise rubrics only).

Verdict counts, the verdicts per option pair (``original`` vs ``human_edited``, a candidate vs
``reference``), and the judge's position bias from the two orders of every pair: the flip rate
and the first-position win rate with cluster-bootstrap intervals over conversations.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import judgments_both_orders, position_bias
from attune_judge.data import Judgment
from attune_judge.errors import UserError

__all__ = ["pairwise_block"]

_VERDICTS = ("A", "B", "tie", "inconsistent")


def pairwise_block(
    ok: Sequence[Judgment],
    options: dict[str, tuple[str, str]],
    *,
    seed: int,
    B: int,
    level: float = DEFAULT_LEVEL,
) -> dict[str, Any] | None:
    """Summary of a pairwise judge's ``ok`` judgments (``None`` if none has a verdict).

    ``options`` maps item id → ``(option_a, option_b)``. ``by_pair`` is keyed by the two
    option names in sorted order (``human_edited vs original``) and counts each option's wins
    whichever side it was shown on.
    """
    judged = [j for j in ok if j.verdict in _VERDICTS]
    if not judged:
        return None
    counts = Counter(str(j.verdict) for j in judged)
    by_pair: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for j in judged:
        a, b = options.get(j.item_id, ("A", "B"))
        key = (min(a, b), max(a, b))
        outcome = {"A": a, "B": b}.get(str(j.verdict), str(j.verdict))
        by_pair[key][outcome] += 1
    block: dict[str, Any] = {
        "n_pairs": len(judged),
        "verdicts": {v: counts.get(v, 0) for v in _VERDICTS},
        "by_pair": {
            f"{a} vs {b}": {
                "n": sum(c.values()),
                "wins": {a: c.get(a, 0), b: c.get(b, 0)},
                "ties": c.get("tie", 0),
                "inconsistent": c.get("inconsistent", 0),
            }
            for (a, b), c in sorted(by_pair.items())
        },
        "position_bias": None,
    }

    ab, ba, clusters = judgments_both_orders(judged)
    if ab:
        try:
            bias = position_bias(ab, ba, clusters, B=B, seed=seed, level=level)
        except UserError as exc:  # e.g. no decisive verdict at all
            block["position_bias_note"] = str(exc)
        else:
            block["position_bias"] = bias.model_dump(mode="json")
    return block
