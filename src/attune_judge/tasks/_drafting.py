"""Drafting: the evaluated model's own reply, scored against what the participant wanted.

Two parts per turn:

- **Judged quality**: a reference judge rates the draft relative to the participant-edited
  response on the draft-judge dimensions (1–7); the normalised score is
  ``(mean - 1) / 6`` (:func:`normalise_draft_scores`; a judge's own ``normalized`` is used when
  it gives one).
- **Behaviour alignment**: the judge answers the turn's applicable behaviour items *for the
  draft* ("did this reply do X?"); each answer is compared with the participant's
  ``preferredBehavior``. Alignment is the share of items with a yes/no preference where the
  draft's behaviour matches it (a missing answer is a mismatch), ``None`` without such items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from attune_judge.data.instrument import DRAFT_JUDGE_DIMENSIONS, DRAFT_JUDGE_SCALE

__all__ = ["behaviour_alignment", "normalise_draft_scores", "score_draft"]


def normalise_draft_scores(scores: Mapping[str, float]) -> float | None:
    """``(mean - lo) / (hi - lo)`` over the draft-judge dimensions present (1..7 -> 0..1).

    >>> normalise_draft_scores({"overall_score": 7, "emotional_appropriateness": 5,
    ...                         "helpfulness": 4, "tone_match": 4})
    0.6666666666666666
    """
    values = [float(scores[d]) for d in DRAFT_JUDGE_DIMENSIONS if d in scores]
    if not values:
        values = [float(v) for v in scores.values()]
    if not values:
        return None
    lo, hi = DRAFT_JUDGE_SCALE
    return (math.fsum(values) / len(values) - lo) / (hi - lo)


def behaviour_alignment(
    preferred: Mapping[str, str | None], draft_answers: Mapping[str, str | None]
) -> tuple[float | None, int]:
    """Share of yes/no preferences the draft's behaviour matches, and how many were scored.

    >>> behaviour_alignment({"B1": "yes", "B2": "no", "B3": "na"}, {"B1": "yes", "B2": "yes"})
    (0.5, 2)
    """
    scored = [(i, v) for i, v in preferred.items() if v in ("yes", "no")]
    if not scored:
        return None, 0
    hits = sum(1 for i, v in scored if draft_answers.get(i) == v)
    return hits / len(scored), len(scored)


def score_draft(
    judge_normalized: float | None,
    preferred: Mapping[str, str | None],
    draft_answers: Mapping[str, str | None],
) -> dict[str, float | None]:
    """Per-turn drafting metrics.

    Returns
    -------
    dict
        ``judge_score`` (0..1, ``None`` when the judge failed), ``alignment`` and
        ``alignment_n``.
    """
    alignment, n = behaviour_alignment(preferred, draft_answers)
    return {"judge_score": judge_normalized, "alignment": alignment, "alignment_n": float(n)}
