"""Conversation level: predict the participant's post-PANAS, q1–q3 and four-branch scores.

Metrics of one conversation (each ``None`` when the participant's answer is missing):

- ``panas_item_mae``: mean ``|predicted - true|`` over the post-PANAS items the participant
  answered; a missing predicted item counts with the largest possible error (6).
- ``panas_pa_abs_error`` / ``panas_na_abs_error``: absolute error of the positive / negative
  affect totals (10–70), the predicted totals being sums of the predicted items.
- ``q1_f1`` (and precision, recall): set F1 of the chosen "looking for" options, with the
  emotion task's conventions (an option outside the list is a false positive; empty = the
  ``neutral`` pseudo-option).
- ``q2_exact``: 1 when the predicted emotion-clarity option equals the participant's.
- ``q3_exact`` and ``q3_distance``: ordinal model-fit, exact agreement and ``|Δ index|`` on the
  best-to-worst scale (0–3; an answer outside the scale counts 3).
- ``four_branch_mae``: mean absolute error over the four branch scores (1–7).
- ``composite``: the mean of ``1 - panas_item_mae/6``, ``q1_f1``, ``q2_exact``,
  ``1 - q3_distance/3`` and ``1 - four_branch_mae/6`` over those defined — a 0..1 score
  (higher = better) used to rank models on this task.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from attune_judge.data.instrument import (
    FOUR_BRANCH_SCALE,
    PANAS_ITEM_SCALE,
    PANAS_NEGATIVE,
    PANAS_POSITIVE,
    Q3_MODEL_FIT_OPTIONS,
)
from attune_judge.tasks._emotion import set_prf

__all__ = ["ConversationTruth", "score_conversation"]

_PANAS_MAX_ERR = float(PANAS_ITEM_SCALE[1] - PANAS_ITEM_SCALE[0])
_BRANCH_MAX_ERR = float(FOUR_BRANCH_SCALE[1] - FOUR_BRANCH_SCALE[0])
_Q3_MAX = float(len(Q3_MODEL_FIT_OPTIONS) - 1)

ConversationTruth = Mapping[str, object]
"""Keys ``post_panas`` (item -> 1..7), ``pa_total``, ``na_total``, ``q1`` (list), ``q2``,
``q3`` (option strings) and ``four_branch`` (branch -> 1..7); any may be ``None``."""


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _panas(
    pred: Mapping[str, float], true: Mapping[str, float] | None, totals: tuple[object, object]
) -> dict[str, float | None]:
    if not true:
        return {"panas_item_mae": None, "panas_pa_abs_error": None, "panas_na_abs_error": None}
    errors = [
        abs(float(pred[item]) - float(value)) if item in pred else _PANAS_MAX_ERR
        for item, value in true.items()
    ]
    out: dict[str, float | None] = {"panas_item_mae": _mean(errors)}
    for key, items, total in (
        ("panas_pa_abs_error", PANAS_POSITIVE, totals[0]),
        ("panas_na_abs_error", PANAS_NEGATIVE, totals[1]),
    ):
        if total is None and all(i in true for i in items):
            total = math.fsum(float(true[i]) for i in items)
        if total is None or not all(i in pred for i in items):
            out[key] = None
        else:
            out[key] = abs(math.fsum(float(pred[i]) for i in items) - float(total))  # type: ignore[arg-type]
    return out


def score_conversation(
    predicted: Mapping[str, object], truth: ConversationTruth
) -> dict[str, float | None]:
    """Conversation-level metrics (see the module docstring).

    Parameters
    ----------
    predicted
        Keys ``post_panas`` (item -> 1..7), ``q1`` (list of options), ``q2``, ``q3`` (option
        strings), ``four_branch`` (branch -> 1..7).
    truth
        The participant's answers, same keys plus ``pa_total`` / ``na_total`` (see
        :data:`ConversationTruth`).
    """
    pred_panas = predicted.get("post_panas") or {}
    true_panas = truth.get("post_panas")
    out = _panas(
        pred_panas,  # type: ignore[arg-type]
        true_panas,  # type: ignore[arg-type]
        (truth.get("pa_total"), truth.get("na_total")),
    )
    true_q1 = truth.get("q1")
    if true_q1:
        p, r, f = set_prf(predicted.get("q1") or [], true_q1)  # type: ignore[arg-type]
        out.update(q1_precision=p, q1_recall=r, q1_f1=f)
    else:
        out.update(q1_precision=None, q1_recall=None, q1_f1=None)
    true_q2 = truth.get("q2")
    out["q2_exact"] = None if true_q2 is None else float(predicted.get("q2") == true_q2)
    true_q3 = truth.get("q3")
    if true_q3 in Q3_MODEL_FIT_OPTIONS:
        pred_q3 = predicted.get("q3")
        t = Q3_MODEL_FIT_OPTIONS.index(str(true_q3))
        dist = (
            abs(Q3_MODEL_FIT_OPTIONS.index(str(pred_q3)) - t)
            if pred_q3 in Q3_MODEL_FIT_OPTIONS
            else _Q3_MAX
        )
        out.update(q3_exact=float(dist == 0), q3_distance=float(dist))
    else:
        out.update(q3_exact=None, q3_distance=None)
    true_fb = truth.get("four_branch") or {}
    pred_fb = predicted.get("four_branch") or {}
    out["four_branch_mae"] = _mean(
        [
            abs(float(pred_fb[b]) - float(v)) if b in pred_fb else _BRANCH_MAX_ERR  # type: ignore[index, operator]
            for b, v in true_fb.items()  # type: ignore[attr-defined]
            if v is not None
        ]
    )
    parts = [
        None if out["panas_item_mae"] is None else 1 - out["panas_item_mae"] / _PANAS_MAX_ERR,
        out["q1_f1"],
        out["q2_exact"],
        None if out["q3_distance"] is None else 1 - out["q3_distance"] / _Q3_MAX,
        None if out["four_branch_mae"] is None else 1 - out["four_branch_mae"] / _BRANCH_MAX_ERR,
    ]
    out["composite"] = _mean([x for x in parts if x is not None])
    return out
