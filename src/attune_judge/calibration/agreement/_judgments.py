"""Converters from judge outputs (``Judgment`` records) to the calibration layer's inputs."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from attune_judge.data import Judgment, Preference, Rating
from attune_judge.errors import UserError

__all__ = [
    "ScoreColumns",
    "judgments_both_orders",
    "judgments_scale",
    "judgments_to_preferences",
    "judgments_to_ratings",
    "judgments_to_scores",
]

ScoreColumns = tuple[list[str], list[str], list[float]]
_LABELS = ("A", "B", "tie")


def judgments_to_ratings(
    judgments: Iterable[Judgment], *, include_overall: bool = True
) -> list[Rating]:
    """One ``Rating`` per (ok judgment, criterion): rater = ``judge_id``, group ``judge``.

    ``Judgment.scores[d]`` becomes dimension ``d``; ``Judgment.overall`` becomes dimension
    ``overall`` (unless a criterion is already called ``overall``). Non-ok judgments are
    skipped: they carry no score. The cluster is the judgment's conversation id.
    """
    out: list[Rating] = []
    for j in judgments:
        if j.status != "ok":
            continue
        common = {
            "item_id": j.item_id,
            "rater": j.judge_id,
            "rater_group": "judge",
            "cluster": j.conversation_id,
        }
        for dim, val in sorted(j.scores.items()):
            out.append(Rating(dimension=dim, value=float(val), **common))
        if include_overall and j.overall is not None and "overall" not in j.scores:
            out.append(Rating(dimension="overall", value=float(j.overall), **common))
    return out


def judgments_to_scores(
    judgments: Iterable[Judgment],
    *,
    field: Literal["normalized", "overall"] = "normalized",
) -> ScoreColumns:
    """``(models, clusters, scores)`` columns for ``leaderboard`` from ok judgments.

    The model is ``candidate_model``, the cluster ``conversation_id`` (the item id when
    missing), the score ``normalized`` (0–1) or ``overall``. Judgments without a model or
    without the score are skipped; NaN is kept (``leaderboard`` counts it per model); an
    infinite score is refused (UserError naming the judgment and the field).
    """
    models: list[str] = []
    clusters: list[str] = []
    scores: list[float] = []
    for j in judgments:
        val = j.normalized if field == "normalized" else j.overall
        if j.status != "ok" or val is None or j.candidate_model is None:
            continue
        if math.isinf(val):
            raise UserError(
                f"judgment of item {j.item_id!r} (model {j.candidate_model!r}, judge "
                f"{j.judge_id!r}): field {field!r} is {val}; scores must be finite"
            )
        models.append(j.candidate_model)
        clusters.append(j.conversation_id or j.item_id)
        scores.append(float(val))
    return models, clusters, scores


def judgments_scale(
    judgments: Iterable[Judgment], field: Literal["normalized", "overall"] = "normalized"
) -> tuple[float, float] | None:
    """The scale ``(low, high)`` of the judgments' ``field``, as the judgments record it.

    ``normalized`` lies on 0–1. ``overall`` lies on the rubric's scale, which every ok
    judgment records through ``normalized = (overall - low) / (high - low)``: two judgments
    with different scores give ``low`` and ``high``, and every other must agree. ``None``
    when the judgments do not fix it: fewer than two distinct scores (then every score is
    one value and no interval can leave the scale), or criteria on different scales (no one
    line through all).

    Examples
    --------
    >>> from attune_judge.data import Judgment
    >>> js = [Judgment(item_id=str(v), judge_id="j", overall=v, normalized=(v - 1) / 4)
    ...       for v in (4.0, 5.0, 4.5)]
    >>> judgments_scale(js, "overall")
    (1.0, 5.0)
    """
    if field == "normalized":
        return (0.0, 1.0)
    pairs = sorted(
        {
            (float(j.normalized), float(j.overall))
            for j in judgments
            if j.status == "ok"
            and j.normalized is not None
            and j.overall is not None
            and math.isfinite(j.normalized)
            and math.isfinite(j.overall)
        }
    )
    if len(pairs) < 2 or pairs[-1][0] <= pairs[0][0]:
        return None
    (n0, o0), (n1, o1) = pairs[0], pairs[-1]
    span = (o1 - o0) / (n1 - n0)
    low = o0 - n0 * span
    tol = 1e-9 * max(1.0, abs(low), abs(low + span))
    if span <= 0 or any(abs(low + n * span - o) > tol for n, o in pairs):
        return None
    return (round(low, 9) + 0.0, round(low + span, 9) + 0.0)


def judgments_to_preferences(
    judgments: Iterable[Judgment], human: Iterable[Preference]
) -> tuple[list[Preference], int]:
    """Pairwise judges' verdicts as ``Preference`` records on the humans' comparisons.

    A judgment matches a human comparison by ``item_id``. Verdicts ``A``/``B``/``tie`` are kept;
    ``inconsistent`` (opposite winners in the two orders) counts as a ``tie``: the judge could
    not separate the responses. Returns the records and the number of inconsistent verdicts.
    """
    hmap = {p.item_id: p for p in human}
    out: list[Preference] = []
    inconsistent = 0
    for j in judgments:
        if j.status != "ok" or j.verdict is None or j.item_id not in hmap:
            continue
        verdict = j.verdict
        if verdict == "inconsistent":
            inconsistent += 1
            verdict = "tie"
        if verdict not in ("A", "B", "tie"):
            continue
        out.append(
            hmap[j.item_id].model_copy(
                update={"winner": verdict, "rater": j.judge_id, "rater_group": "judge"}
            )
        )
    return out, inconsistent


def judgments_both_orders(judgments: Iterable[Judgment]) -> tuple[list[str], list[str], list[str]]:
    """``(verdict_ab, verdict_ba, clusters)`` for ``position_bias`` from pairwise judgments.

    Uses ``details["order_ab"]`` and ``details["order_ba"]`` (the verdict of each order in
    that call's own labels) of ok judgments that have both.
    """
    ab: list[str] = []
    ba: list[str] = []
    cl: list[str] = []
    for j in judgments:
        first, second = j.details.get("order_ab"), j.details.get("order_ba")
        if j.status != "ok" or first not in _LABELS or second not in _LABELS:
            continue
        ab.append(str(first))
        ba.append(str(second))
        cl.append(j.conversation_id or j.item_id)
    return ab, ba, cl
