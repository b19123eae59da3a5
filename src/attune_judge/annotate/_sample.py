"""``annotate sample``: which items to label, with each item's inclusion probability.

- ``by="conversation"``: a simple random sample of ``n`` conversations; every item of a drawn
  conversation is labelled; each item's inclusion probability is ``n / C``.
- ``by="model"`` / ``by="score"``: items are split into strata (the candidate model, or
  ``strata`` equal-count bins of a judge run's normalised score) and ``n`` items are drawn
  without replacement, split equally between strata (or in proportion to their size with
  ``allocation="proportional"``); an item of stratum *h* is drawn with probability
  ``n_h / N_h``.

The probability (and the stratum) is written into each item's ``metadata``, and
``annotate export`` copies it into every label's ``metadata``, so an estimate can weight a
label by ``1 / inclusion_probability`` (Horvitz–Thompson).

:func:`conversations_needed` reads a pilot's labels and scales the interval width of α
among annotators to a target: widths shrink with the square root of the number of
conversations, so ``C_needed = C_pilot * (width_pilot / target)^2``, and never fewer than
``MIN_CLUSTERS`` (10): below it no interval is validated. A pilot of fewer conversations has
unvalidated widths itself (``annotate sample --pilot`` warns).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import MIN_CLUSTERS
from attune_judge.data import JudgeItem, read_judgments
from attune_judge.errors import UserError

__all__ = ["SAMPLE_BY", "conversations_needed", "sample_items"]

SAMPLE_BY = ("conversation", "model", "score")


def _scores(judge: Path) -> dict[str, float]:
    path = judge / "judgments.jsonl" if judge.is_dir() else judge
    if not path.is_file():
        raise UserError(f"{judge}: no judgments.jsonl (--judge needs a scoring run)")
    out: dict[str, float] = {}
    for j in read_judgments(path):
        value = j.normalized if j.normalized is not None else j.overall
        if j.status == "ok" and value is not None:
            out[j.item_id] = float(value)
    return out


def _strata(items: Sequence[JudgeItem], by: str, judge: Path | None, n_strata: int) -> list[str]:
    if by == "model":
        return [str(i.candidate_model) for i in items]
    if judge is None:
        raise UserError("--by score needs --judge RUN (the run whose scores make the strata)")
    if n_strata < 2:
        raise UserError(f"--strata must be at least 2, not {n_strata}")
    scores = _scores(judge)
    missing = [i.item_id for i in items if i.item_id not in scores]
    if missing:
        raise UserError(
            f"{judge}: no ok judgment of item {missing[0]!r} ({len(missing)} items unscored)"
        )
    values = np.array([scores[i.item_id] for i in items])
    edges = np.quantile(values, np.linspace(0, 1, n_strata + 1)[1:-1])
    bins = np.searchsorted(edges, values, side="right")
    return [f"score bin {b + 1} of {n_strata}" for b in bins]


def _allocate(sizes: dict[str, int], n: int, allocation: str) -> dict[str, int]:
    """Items per stratum, capped by the stratum's size, summing to ``min(n, total)``."""
    if allocation not in ("equal", "proportional"):
        raise UserError(f"--allocation must be equal or proportional, not {allocation!r}")
    total = sum(sizes.values())
    n = min(n, total)
    share = {
        h: (n / len(sizes) if allocation == "equal" else n * s / total) for h, s in sizes.items()
    }
    alloc = {h: min(sizes[h], math.floor(share[h])) for h in sizes}
    while sum(alloc.values()) < n:  # largest remainders first, then any stratum with room
        room = [h for h in sorted(sizes) if alloc[h] < sizes[h]]
        room.sort(key=lambda h: -(share[h] - alloc[h]))
        alloc[room[0]] += 1
    return alloc


def sample_items(
    items: Sequence[JudgeItem],
    n: int,
    *,
    by: str = "conversation",
    judge: Path | None = None,
    strata: int = 4,
    allocation: str = "equal",
    seed: int = 0,
) -> list[JudgeItem]:
    """The drawn items, in their original order, each with ``inclusion_probability``."""
    if by not in SAMPLE_BY:
        raise UserError(f"--by must be conversation, model or score, not {by!r}")
    if n < 1:
        raise UserError(f"--n must be at least 1, not {n}")
    rng = np.random.default_rng(seed)
    prob: dict[str, float] = {}
    stratum: dict[str, str] = {}
    if by == "conversation":
        convs = sorted({i.conversation_id for i in items})
        take = min(n, len(convs))
        drawn = set(rng.choice(len(convs), size=take, replace=False).tolist())
        keep = {convs[c] for c in drawn}
        for i in items:
            if i.conversation_id in keep:
                prob[i.item_id], stratum[i.item_id] = take / len(convs), "all"
    else:
        labels = _strata(items, by, judge, strata)
        groups: dict[str, list[JudgeItem]] = defaultdict(list)
        for item, h in zip(items, labels, strict=True):
            groups[h].append(item)
        alloc = _allocate({h: len(g) for h, g in groups.items()}, n, allocation)
        for h in sorted(groups):
            group = groups[h]
            for idx in rng.choice(len(group), size=alloc[h], replace=False).tolist():
                prob[group[idx].item_id] = alloc[h] / len(group)
                stratum[group[idx].item_id] = h
    out = []
    for i in items:
        if i.item_id in prob:
            meta = {
                **i.metadata,
                "inclusion_probability": prob[i.item_id],
                "stratum": stratum[i.item_id],
                "sampled_by": by,
                "sample_seed": seed,
            }
            out.append(i.model_copy(update={"metadata": meta}))
    return out


def _needed(row: dict[str, Any], width: float) -> dict[str, Any]:
    have = row["low"] is not None and row["high"] is not None and row["high"] > row["low"]
    pilot_w = row["high"] - row["low"] if have else None
    # never fewer than MIN_CLUSTERS: below it no interval's coverage was validated, however
    # narrow the extrapolation says it would be
    need = (
        max(MIN_CLUSTERS, math.ceil(row["clusters"] * (pilot_w / width) ** 2)) if pilot_w else None
    )
    return {**row, "width": pilot_w, "conversations_needed": need}


def conversations_needed(
    records: Sequence[Any],
    width: float,
    *,
    judge: Path | None = None,
    metric: str = "spearman",
    B: int = DEFAULT_B,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per dimension and statistic (α among annotators; with ``judge``, the judge's
    ``metric`` against the annotators' aggregate): the pilot's conversations, its interval
    width, and the conversations a ``width``-wide interval needs (``None``: no interval)."""
    from attune_judge import calibration as cal
    from attune_judge.annotate._agreement import annotator_alpha

    if not 0 < width < 2:
        raise UserError(f"--width is an interval width between 0 and 2, not {width!r}")
    out = [
        _needed({**row, "statistic": "α among annotators"}, width)
        for row in annotator_alpha(list(records), B=B, seed=seed)
    ]
    if judge is None:
        return out
    if metric not in cal.PAIR_METRICS:
        raise UserError(f"--metric must be one of {', '.join(cal.PAIR_METRICS)}, not {metric!r}")
    ratings = [r for r in records if not hasattr(r, "winner")]
    if not ratings:
        raise UserError("--judge with --pilot needs Rating labels (not preferences)")
    path = judge / "judgments.jsonl" if judge.is_dir() else judge
    judged = cal.judgments_to_ratings(read_judgments(path))
    report = cal.calibrate(ratings, judged, B=B, seed=seed)
    for dim in report.dimensions:
        for j in dim.judges:
            m = j.vs_humans.metrics.get(metric)
            if m is None:
                continue
            row = {
                "dimension": dim.dimension,
                "statistic": f"judge {metric}",
                "alpha": m.estimate,
                "low": m.lower,
                "high": m.upper,
                "clusters": j.vs_humans.n_clusters,
            }
            out.append(_needed(row, width))
    return out
