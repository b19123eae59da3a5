"""Emotion recognition: predicted PANAS-SF tags against the participant's ``moodShiftTags``.

Conventions (decided here, applied everywhere):

- **Canonical names.** Tags are compared by the instrument's spelling, case and surrounding
  whitespace ignored (``" nervous"`` = ``Nervous``). A repeated tag counts once (the first
  intensity given is kept).
- **Out-of-vocabulary tags are errors.** A predicted tag that is not a PANAS-SF item is kept
  as a false positive (it enlarges the predicted set), never dropped.
- **Neutral is a class.** An empty tag list means "neutral / no shift". Set metrics treat it
  as the single pseudo-tag ``neutral``: empty true and empty predicted is a correct neutral
  prediction (precision = recall = F1 = 1); predicting tags for a neutral turn, or no tags for
  a non-neutral turn, gives precision = recall = F1 = 0.
- **Valence-arousal similarity.** In-vocabulary predicted tags are matched one-to-one to true
  tags by minimum total Euclidean distance on the instrument's (valence, arousal) coordinates
  (``scipy.optimize.linear_sum_assignment``); a matched pair scores ``1 - d/√2`` (1 for the
  same tag, 0 for opposite corners of the unit square). Unmatched tags on either side, and
  out-of-vocabulary tags, score 0, so the similarity is
  ``Σ_matched (1 - d/√2) / max(n_predicted, n_true)``: predicting too many or too few tags
  costs. Both empty: 1; exactly one empty: 0.
- **Intensity MAE** is the mean ``|predicted - true|`` intensity over the VA-matched pairs
  where both intensities are known; ``None`` when there is no such pair.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from attune_judge.data.instrument import VALENCE_AROUSAL, canonical_panas_item

__all__ = ["NEUTRAL", "EmotionTag", "normalise_tags", "score_emotion", "set_prf"]

NEUTRAL = "neutral"
"""The pseudo-tag an empty tag list stands for in set metrics."""

_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True)
class EmotionTag:
    """One emotion tag with an optional intensity (1..7)."""

    emotion: str
    """The PANAS-SF item (or, for a bad prediction, whatever the model wrote)."""
    intensity: float | None = None
    """Intensity 1..7, or ``None`` when not given."""


def normalise_tags(tags: Iterable[EmotionTag]) -> tuple[list[EmotionTag], list[str]]:
    """Split tags into canonical in-vocabulary tags and out-of-vocabulary names.

    Returns
    -------
    tuple[list[EmotionTag], list[str]]
        In-vocabulary tags with the instrument's spelling (first occurrence of each kept),
        and the distinct out-of-vocabulary names (stripped, lower-cased) in order of
        appearance.
    """
    known: dict[str, EmotionTag] = {}
    unknown: dict[str, None] = {}
    for tag in tags:
        name = canonical_panas_item(tag.emotion)
        if name is None:
            unknown.setdefault(tag.emotion.strip().lower(), None)
        elif name not in known:
            known[name] = EmotionTag(name, tag.intensity)
    return list(known.values()), list(unknown)


def set_prf(predicted: Iterable[str], true: Iterable[str]) -> tuple[float, float, float]:
    """Set precision, recall and F1, with the empty set standing for ``neutral``.

    >>> set_prf(["Afraid", "Upset"], ["Afraid"])
    (0.5, 1.0, 0.6666666666666666)
    >>> set_prf([], [])
    (1.0, 1.0, 1.0)
    >>> set_prf(["Afraid"], [])
    (0.0, 0.0, 0.0)
    """
    p = set(predicted) or {NEUTRAL}
    t = set(true) or {NEUTRAL}
    tp = len(p & t)
    precision = tp / len(p)
    recall = tp / len(t)
    f1 = 0.0 if tp == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def _va_matching(
    predicted: Sequence[EmotionTag], true: Sequence[EmotionTag]
) -> list[tuple[EmotionTag, EmotionTag, float]]:
    """Optimal one-to-one matching on VA coordinates: ``(pred, true, distance)`` per pair."""
    from scipy.optimize import linear_sum_assignment

    if not predicted or not true:
        return []
    P = np.array([VALENCE_AROUSAL[t.emotion] for t in predicted], dtype=np.float64)
    T = np.array([VALENCE_AROUSAL[t.emotion] for t in true], dtype=np.float64)
    D = np.sqrt(((P[:, None, :] - T[None, :, :]) ** 2).sum(-1))
    rows, cols = linear_sum_assignment(D)
    return [(predicted[r], true[c], float(D[r, c])) for r, c in zip(rows, cols, strict=True)]


def score_emotion(
    predicted: Iterable[EmotionTag], true: Iterable[EmotionTag]
) -> dict[str, float | None]:
    """All emotion-recognition metrics of one turn (conventions in the module docstring).

    Parameters
    ----------
    predicted
        The evaluated model's tags (any strings; out-of-vocabulary ones count as errors).
    true
        The participant's ``moodShiftTags`` (in-vocabulary by validation of the data).

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1``, ``va_similarity``, ``intensity_mae`` (``None``
        without a matched pair with both intensities), ``exact_match`` (1 when the two sets are
        equal), ``n_predicted`` (out-of-vocabulary included), ``n_true``, ``n_out_of_vocabulary``.
    """
    pred_ok, pred_bad = normalise_tags(predicted)
    true_ok, true_bad = normalise_tags(true)
    if true_bad:
        raise ValueError(f"true tags outside the PANAS-SF vocabulary: {true_bad}")
    pred_names = [t.emotion for t in pred_ok] + [f"?{name}" for name in pred_bad]
    true_names = [t.emotion for t in true_ok]
    precision, recall, f1 = set_prf(pred_names, true_names)
    n_pred, n_true = len(pred_names), len(true_names)
    pairs = _va_matching(pred_ok, true_ok)
    if n_pred == 0 and n_true == 0:
        va = 1.0
    elif n_pred == 0 or n_true == 0:
        va = 0.0
    else:
        va = math.fsum(1.0 - d / _SQRT2 for _, _, d in pairs) / max(n_pred, n_true)
    diffs = [
        abs(float(p.intensity) - float(t.intensity))
        for p, t, _ in pairs
        if p.intensity is not None and t.intensity is not None
    ]
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "va_similarity": va,
        "intensity_mae": math.fsum(diffs) / len(diffs) if diffs else None,
        "exact_match": float(set(pred_names) == set(true_names)),
        "n_predicted": float(n_pred),
        "n_true": float(n_true),
        "n_out_of_vocabulary": float(len(pred_bad)),
    }
