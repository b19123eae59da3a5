"""Checking a submitted answer, and turning stored labels into the toolkit's records.

The page (and any script) sends answers in the order it was shown: ``first`` / ``second`` /
``tie`` for a pair, a number per criterion for ratings, ``yes`` / ``no`` per behaviour item.
A pair's answer is stored with the order shown and mapped back to the item's own A / B.
:func:`to_records` gives the ``Rating`` / ``Preference`` records ``calibrate``, ``rank --human``
and ``align`` read: raters are the annotators (group ``annotators``), clusters the
conversations, and each record's metadata keeps the item's inclusion probability when
``annotate sample`` drew it.
"""

from __future__ import annotations

from typing import Any

from attune_judge.data import JudgeItem, Preference, Rating, behaviour_dimension
from attune_judge.rubrics import Rubric

__all__ = ["GROUP", "BadAnswerError", "check_answers", "to_records"]

GROUP = "annotators"
"""``rater_group`` of every exported label."""


class BadAnswerError(ValueError):
    """A submitted answer that cannot be stored (the message says which field and why)."""


def _asked(item: JudgeItem, rubric: Rubric, task: str) -> list[str]:
    ids = [c.id for c in rubric.criteria]
    asked = item.metadata.get("behaviour_items") if task == "behaviours" else None
    return [i for i in ids if i in {str(a) for a in asked}] if asked else ids


def check_answers(
    task: str, rubric: Rubric, item: JudgeItem, answers: Any, flip: bool
) -> dict[str, Any]:
    """The answers to store, or :class:`BadAnswerError` naming the field."""
    if not isinstance(answers, dict):
        raise BadAnswerError("field answers: expected an object")
    if task == "pairwise":
        choice = answers.get("choice")
        if set(answers) != {"choice"} or choice not in ("first", "second", "tie"):
            raise BadAnswerError('field answers.choice: expected "first", "second" or "tie"')
        winner = "tie" if choice == "tie" else ("A" if (choice == "first") != flip else "B")
        return {"choice": choice, "winner": winner}
    asked = _asked(item, rubric, task)
    extra = sorted(set(answers) - set(asked))
    if extra:
        raise BadAnswerError(f"field answers.{extra[0]}: not a criterion asked of this item")
    out: dict[str, Any] = {}
    scales = {c.id: c.scale for c in rubric.criteria}
    for cid in asked:
        if cid not in answers:
            raise BadAnswerError(f"field answers.{cid}: missing")
        value = answers[cid]
        if task == "behaviours":
            if value not in ("yes", "no"):
                raise BadAnswerError(f'field answers.{cid}: expected "yes" or "no", not {value!r}')
        else:
            scale = scales[cid]
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or scale is None
                or not scale.min <= value <= scale.max
            ):
                lo, hi = (scale.min, scale.max) if scale else ("?", "?")
                raise BadAnswerError(f"field answers.{cid}: expected a whole number {lo}..{hi}")
        out[cid] = value
    return out


def _overall(rubric: Rubric, values: dict[str, float]) -> float:
    """The rubric's aggregation of the criterion values (as the judge's ``overall``)."""
    if rubric.aggregation.method == "weighted":
        w = rubric.aggregation.weights
        return sum(values[c] * w[c] for c in values) / sum(w[c] for c in values)
    return sum(values.values()) / len(values)


def to_records(
    task: str, rubric: Rubric, items: dict[str, JudgeItem], labels: list[dict[str, Any]]
) -> list[Rating] | list[Preference]:
    """``Rating`` (ratings, behaviours) or ``Preference`` (pairwise) records of the labels."""
    prefs: list[Preference] = []
    ratings: list[Rating] = []
    for row in labels:
        item = items[row["item_id"]]
        meta: dict[str, Any] = {"source": "attune-judge annotate", "labelled_at": row["created"]}
        for key in ("inclusion_probability", "stratum"):
            if key in item.metadata:
                meta[key] = item.metadata[key]
        common = {
            "item_id": item.item_id,
            "rater": row["annotator"],
            "rater_group": GROUP,
            "cluster": item.conversation_id,
        }
        answers = row["answers"]
        if task == "pairwise":
            meta["shown_first"] = "B" if row["swapped"] else "A"
            prefs.append(
                Preference(
                    option_a=str(item.metadata.get("option_a", "A")),
                    option_b=str(item.metadata.get("option_b", "B")),
                    text_a=item.candidate,
                    text_b=str(item.metadata.get("other", "")),
                    winner=answers["winner"],
                    question=str(item.metadata.get("question", "general")),
                    metadata=meta,
                    **common,
                )
            )
        elif task == "behaviours":
            for cid, value in sorted(answers.items()):
                ratings.append(
                    Rating(dimension=behaviour_dimension(cid), value=value, metadata=meta, **common)
                )
        else:
            values = {c.id: float(answers[c.id]) for c in rubric.criteria}
            for c in rubric.criteria:
                assert c.scale is not None
                ratings.append(
                    Rating(
                        dimension=c.id,
                        value=values[c.id],
                        metadata={**meta, "scale_min": c.scale.min, "scale_max": c.scale.max},
                        **common,
                    )
                )
            if "overall" not in values:
                ratings.append(
                    Rating(
                        dimension="overall",
                        value=_overall(rubric, values),
                        metadata={**meta, "derived": "rubric aggregation"},
                        **common,
                    )
                )
    return prefs if task == "pairwise" else ratings
