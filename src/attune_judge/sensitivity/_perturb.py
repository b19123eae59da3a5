"""Perturbations of a rubric: each returns a new, valid :class:`Rubric` with its own hash.

A perturbed rubric keeps the base's ``id`` and gets ``version = "<base version>+<name>"``
(one ``+name`` per perturbation applied), so judge specs, judge ids and manifests say which
variant produced a judgment. The functions never mutate their input.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric, Scale

__all__ = [
    "change_scale",
    "drop_anchors",
    "paraphrase_criteria",
    "remove_criterion",
    "replace_instructions",
    "rescale_level",
    "shuffle_criteria",
]


def _rebuild(rubric: Rubric, data: dict[str, Any], tag: str) -> Rubric:
    """Validate modified rubric data, tagging the version with ``+tag``."""
    data["version"] = f"{rubric.version}+{tag}"
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or '(rubric)'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        ]
        raise UserError(
            f"perturbation {tag!r} makes rubric {rubric.id!r} invalid", problems
        ) from None


def shuffle_criteria(rubric: Rubric, seed: int, *, tag: str = "shuffled") -> Rubric:
    """The criteria in a random order (``random.Random(seed).shuffle``); anything else kept.

    With two or more criteria the order is guaranteed to differ from the base order: a draw
    that reproduces it is rotated by one position.
    """
    data = rubric.model_dump(mode="python")
    criteria = list(data["criteria"])
    order = list(range(len(criteria)))
    random.Random(seed).shuffle(order)
    if len(order) > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    data["criteria"] = [criteria[i] for i in order]
    return _rebuild(rubric, data, tag)


def rescale_level(level: int, old: Scale, new: Scale) -> float:
    """Position of ``level`` of ``old`` on ``new`` (linear map of the end points)."""
    return new.min + (level - old.min) * (new.max - new.min) / (old.max - old.min)


def _rescaled_anchors(anchors: Mapping[int, str], old: Scale, new: Scale) -> dict[int, str]:
    """Anchors moved to the nearest level of the new scale (round half up).

    When two old levels land on one new level, the one whose exact position is closer keeps it
    (ties: the lower old level).
    """
    best: dict[int, tuple[float, int, str]] = {}
    for level, text in sorted(anchors.items()):
        exact = rescale_level(level, old, new)
        target = math.floor(exact + 0.5)
        distance = abs(exact - target)
        if target not in best or distance < best[target][0]:
            best[target] = (distance, level, text)
    return {target: text for target, (_, _, text) in sorted(best.items())}


def change_scale(
    rubric: Rubric,
    new_min: int,
    new_max: int,
    *,
    anchors: Literal["rescale", "drop"] = "rescale",
    instructions: str | None = None,
    tag: str = "scale",
) -> Rubric:
    """Every criterion with a scale moved to ``new_min..new_max``.

    Parameters
    ----------
    rubric
        The base rubric.
    new_min, new_max
        The new scale (for example 1..5, 1..7 or 1..10).
    anchors
        ``rescale``: each anchor moves to the nearest level of the new scale
        (``new_min + (l − min)(new_max − new_min)/(max − min)``, rounded half up; e.g. 1..7 →
        1..5 maps 1, 4, 7 to 1, 3, 5); ``drop``: anchors are removed.
    instructions
        New instructions text. Without it, a literal ``from <min> to <max>`` of the base
        scale in the instructions is rewritten to the new scale (other mentions stay).
    tag
        Version tag.
    """
    new = Scale(min=new_min, max=new_max)
    data = rubric.model_dump(mode="python")
    old_scales: set[tuple[int, int]] = set()
    for crit in data["criteria"]:
        if crit.get("scale") is None:
            continue
        old = Scale(**crit["scale"])
        old_scales.add((old.min, old.max))
        crit["anchors"] = (
            _rescaled_anchors(crit.get("anchors") or {}, old, new) if anchors == "rescale" else {}
        )
        crit["scale"] = {"min": new.min, "max": new.max}
    if instructions is not None:
        data["instructions"] = instructions
    elif len(old_scales) == 1:
        (lo, hi) = next(iter(old_scales))
        data["instructions"] = data["instructions"].replace(
            f"from {lo} to {hi}", f"from {new.min} to {new.max}"
        )
    return _rebuild(rubric, data, tag)


def remove_criterion(rubric: Rubric, criterion_id: str, *, tag: str = "drop") -> Rubric:
    """The rubric without one criterion (and without its aggregation weight)."""
    ids = [c.id for c in rubric.criteria]
    if criterion_id not in ids:
        raise UserError(
            f"perturbation {tag!r}: rubric {rubric.id!r} has no criterion {criterion_id!r}",
            [f"criteria: {', '.join(ids)}"],
        )
    if len(ids) == 1:
        raise UserError(
            f"perturbation {tag!r}: cannot remove {criterion_id!r}, the rubric's only criterion"
        )
    data = rubric.model_dump(mode="python")
    data["criteria"] = [c for c in data["criteria"] if c["id"] != criterion_id]
    weights = data["aggregation"].get("weights") or {}
    weights.pop(criterion_id, None)
    return _rebuild(rubric, data, tag)


def drop_anchors(rubric: Rubric, *, tag: str = "no-anchors") -> Rubric:
    """The rubric with every anchor description removed (scales kept)."""
    data = rubric.model_dump(mode="python")
    for crit in data["criteria"]:
        crit["anchors"] = {}
    return _rebuild(rubric, data, tag)


def paraphrase_criteria(
    rubric: Rubric,
    descriptions: Mapping[str, str],
    *,
    names: Mapping[str, str] | None = None,
    instructions: str | None = None,
    tag: str = "paraphrase",
) -> Rubric:
    """The rubric with some criterion descriptions (and optionally names, instructions)
    replaced by the given paraphrases; ids, scales and anchors are kept."""
    ids = [c.id for c in rubric.criteria]
    unknown = sorted((set(descriptions) | set(names or {})) - set(ids))
    if unknown:
        raise UserError(
            f"perturbation {tag!r}: rubric {rubric.id!r} has no criterion "
            f"{', '.join(map(repr, unknown))}",
            [f"criteria: {', '.join(ids)}"],
        )
    data = rubric.model_dump(mode="python")
    for crit in data["criteria"]:
        if crit["id"] in descriptions:
            crit["description"] = descriptions[crit["id"]]
        if names and crit["id"] in names:
            crit["name"] = names[crit["id"]]
    if instructions is not None:
        data["instructions"] = instructions
    return _rebuild(rubric, data, tag)


def replace_instructions(rubric: Rubric, instructions: str, *, tag: str = "instructions") -> Rubric:
    """The rubric with new instructions (everything else kept)."""
    data = rubric.model_dump(mode="python")
    data["instructions"] = instructions
    return _rebuild(rubric, data, tag)
