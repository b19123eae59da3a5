"""The files ``calibrate`` and ``rank`` read: where the records are, what kind they are, and
whether human labels are usable numbers or categories.

Every problem is a :class:`~attune_judge.errors.UserError` naming the file and line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Literal, TypeVar

from attune_judge.calibration import check_level as check
from attune_judge.calibration import one_label_per_rater
from attune_judge.data import Preference, Rating, read_jsonl, reading_utf8
from attune_judge.errors import UserError

__all__ = [
    "RecordKind",
    "check_human_labels",
    "check_level",
    "inclusion_weights",
    "jsonl_path",
    "read_labels",
    "record_kind",
    "weighting_note",
]

L = TypeVar("L", Rating, Preference)

RecordKind = Literal["rating", "preference", "judgment", "scores"]
"""What a JSONL file holds: Rating, Preference or Judgment records, or {model, score} rows."""


def jsonl_path(path: Path) -> Path:
    """The JSONL to read: ``path`` itself, or a run directory's ``judgments.jsonl`` (a
    ``validate -o`` folder's is in its ``run``)."""
    path = Path(path)
    if path.is_dir():
        for cand in (path / "judgments.jsonl", path / "run" / "judgments.jsonl"):
            if cand.exists():
                return cand
        raise UserError(
            f"{path}: a run directory must contain judgments.jsonl (a validate -o folder "
            "has it in run/)"
        )
    if not path.exists():
        raise UserError(f"{path}: file not found")
    return path


def check_level(level: float, name: str = "--ci") -> None:
    """A confidence level strictly between 0 and 1 (:func:`attune_judge.calibration.check_level`
    naming the option)."""
    check(level, name)


def _each_object(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, parsed JSON) of each non-empty line, as it is read."""
    with reading_utf8(path), path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{n}: not valid JSON: {exc.msg}") from None
            yield n, obj


def _objects(path: Path) -> list[tuple[int, object]]:
    """(line number, parsed JSON) of every non-empty line (all read before any is used)."""
    return list(_each_object(path))


def record_kind(path: Path) -> RecordKind:
    """``rating``, ``preference``, ``judgment`` or ``scores`` from the first record's keys."""
    for n, obj in _each_object(path):
        if not isinstance(obj, dict):
            raise UserError(f"{path}:{n}: expected a JSON object per line")
        if "judge_id" in obj:
            return "judgment"
        if "winner" in obj:
            return "preference"
        if "value" in obj and "rater" in obj:
            return "rating"
        if {"model", "score"} <= set(obj):
            return "scores"
        raise UserError(
            f"{path}:{n}: cannot tell the record type (expected Rating, Preference, "
            "Judgment or {model, cluster, score} rows)"
        )
    raise UserError(f"{path}: empty file")


def read_labels(path: Path, model: type[L]) -> list[L]:
    """The human labels of ``path`` (Rating or Preference JSONL) as every command reads them:
    a rater's label of an item counts once, and two different labels of one rater for one item
    are refused naming the file and both lines
    (:func:`attune_judge.calibration.one_label_per_rater`)."""
    records = read_jsonl(path, model)
    lines = [n for n, _ in _objects(path)]
    return one_label_per_rater(records, source=path, lines=lines)


def check_human_labels(
    path: Path,
    measurement: str,
    *,
    scale: tuple[float, float] | None = None,
    scale_option: str = "--scale",
    dimensions: Collection[str] | None = None,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> None:
    """Refuse human Rating values that are not a usable label, naming file and line.

    With a declared ``scale`` (LOW, HIGH), a number outside it is refused too (a 99 on a 1–5
    scale is a typo, not a rating); ``dimensions`` limits that check to the ratings of those
    dimensions (the ones the command uses; a record without one is ``overall``).

    A value is a finite number, a category (text) or ``null`` (missing). ``NaN`` and
    ``±Infinity`` (which JSON parsers accept), booleans (which would silently count as 1 and
    0), and a file mixing text and numbers are errors, except that text and numbers may mix at
    ``measurement="nominal"``, where every value is only a category. With ``scales`` (dimension →
    ``(min, max)``), a value of such a dimension must be a number within it (``align``: the
    rubric's scale of each criterion).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "h.jsonl"
    >>> _ = p.write_text('{"value": 3}\\n{"value": true}\\n')
    >>> check_human_labels(p, "ordinal")
    Traceback (most recent call last):
    ...
    attune_judge.errors.UserError: ...h.jsonl:2: field value: true is a boolean, not a rating ...
    """
    first_text: int | None = None
    first_number: int | None = None
    for n, obj in _objects(path):
        if not isinstance(obj, dict) or "value" not in obj:
            continue
        value = obj["value"]
        where = f"{path}:{n}: field value"
        if isinstance(value, bool):
            raise UserError(
                f"{where}: {json.dumps(value)} is a boolean, not a rating (write 1/0, or a "
                "category in quotes)"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"{where}: {value!r} is not a rating (use null for a missing one)")
        dimension = obj.get("dimension", "overall")
        if (
            scale is not None
            and isinstance(value, int | float)
            and not scale[0] <= value <= scale[1]
            and (dimensions is None or dimension in dimensions)
        ):
            raise UserError(
                f"{where}: {value:g} is off the declared scale {scale[0]:g}–{scale[1]:g} "
                f"({scale_option}; dimension {dimension!r}); fix the label or the scale"
            )
        bounds = (scales or {}).get(str(dimension))
        if bounds is not None and value is not None:
            low, high = bounds
            if not isinstance(value, int | float) or not low <= value <= high:
                raise UserError(
                    f"{where}: {json.dumps(value)} is not on the scale {low:g}..{high:g} of "
                    f"dimension {dimension!r}"
                )
        if isinstance(value, str):
            first_text = n if first_text is None else first_text
        elif isinstance(value, int | float):
            first_number = n if first_number is None else first_number
        if first_text is not None and first_number is not None and measurement != "nominal":
            raise UserError(
                f"{path}:{max(first_text, first_number)}: field value: text and numbers mixed "
                f"(line {first_number} is a number, line {first_text} text); use one kind, or "
                "--measurement nominal to treat every value as a category"
            )


INCLUSION = "inclusion_probability"
"""The ``metadata`` field ``annotate sample`` writes (and ``annotate export`` keeps)."""


def inclusion_weights(path: Path) -> dict[str, float] | None:
    """Each labelled item's weight ``1 / inclusion_probability`` (``metadata``), when the labels
    of ``path`` were drawn with unequal probabilities (``annotate sample --by model|score``);
    ``None`` when no record has one or all are equal (the unweighted estimates are then the
    right ones, and the same numbers as always).

    A file where some records have the probability and others do not, a probability that is
    not a number in (0, 1], or one item with two different probabilities is an error naming
    file, line and field.
    """
    field = f"metadata.{INCLUSION}"
    probs: dict[str, float] = {}
    first_with: int | None = None
    first_without: int | None = None
    for n, obj in _objects(path):
        if not isinstance(obj, dict):
            continue
        meta = obj.get("metadata")
        p = meta.get(INCLUSION) if isinstance(meta, dict) else None
        if p is None:
            first_without = n if first_without is None else first_without
        else:
            first_with = n if first_with is None else first_with
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p <= 1:
                raise UserError(
                    f"{path}:{n}: field {field}: {json.dumps(p)} is not a probability in (0, 1]"
                )
            item = str(obj.get("item_id"))
            if probs.setdefault(item, float(p)) != float(p):
                raise UserError(
                    f"{path}:{n}: field {field}: {p:g} differs from {probs[item]:g} given for "
                    f"the same item {item!r} on an earlier line"
                )
        if first_with is not None and first_without is not None:
            raise UserError(
                f"{path}:{max(first_with, first_without)}: field {field} is missing (line "
                f"{first_without} has none, line {first_with} has one): give every label its "
                "item's inclusion probability, or none"
            )
    if len(set(probs.values())) < 2:
        return None
    return {item: 1.0 / p for item, p in probs.items()}


def weighting_note(weights: Mapping[str, float] | None, path: Path) -> str:
    """The one-line statement that the labels of ``path`` were weighted; ``""`` unweighted."""
    if not weights:
        return ""
    probs = [1.0 / w for w in weights.values()]
    return (
        f"Labels of {path.name} weighted by 1/inclusion probability ({min(probs):.3g} to "
        f"{max(probs):.3g}, Hajek-normalised): the estimates describe all items the sample "
        "was drawn from, not the labelled sample."
    )
