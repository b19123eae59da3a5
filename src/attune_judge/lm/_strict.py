"""Strict reading of a model's JSON answer: one object, the signature's fields, exact values.

A judge's answer becomes a score only when nothing about it is ambiguous. :func:`strict_parse`
accepts exactly one JSON object (optionally inside one Markdown code fence) and nothing else:

- more than one JSON value, or any text outside the object → ``multiple_objects`` /
  ``text_outside``; a repeated key → ``duplicate_key``; ``NaN`` / ``Infinity`` → ``not_json``;
- every output field present, no other key (``missing_field`` / ``unknown_field``);
- each value of exactly its declared type (``invalid_value``): an integer score is a JSON
  integer or a decimal integer literal (``7`` or ``"7"``) inside its scale — never a boolean,
  a float (``7.0``, ``6.5``), a hex/octal/other string (``"0x7"``, ``"0o7"``, ``"7/10"``) or
  an out-of-scale number; a categorical answer (``"yes"``, ``"A"``) is one of its options
  (letter case ignored); text is a JSON string.

Failures raise :func:`parse_failure` errors (a DSPy ``AdapterParseError`` carrying ``reason``), so
judges record them as ``parse_error`` with the raw answer kept.
"""

from __future__ import annotations

import json
import math
import re
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

__all__ = ["PARSE_REASONS", "check_value", "parse_failure", "strict_parse"]

PARSE_REASONS = (
    "empty",
    "not_json",
    "not_object",
    "multiple_objects",
    "text_outside",
    "duplicate_key",
    "missing_field",
    "unknown_field",
    "invalid_value",
    "truncated",
    "out_of_scale",
)
"""Every ``details["reason"]`` a ``parse_error`` judgment can carry."""

_FENCE = re.compile(r"\A```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*)\n[ \t]*```\Z", re.DOTALL)
_INT_LITERAL = re.compile(r"\A-?(0|[1-9][0-9]*)\Z")


class _InvalidError(ValueError):
    """A value that does not have its field's type."""


def parse_failure(reason: str, message: str, completion: str, signature: Any = None) -> Exception:
    """A DSPy ``AdapterParseError`` with ``attune_reason`` (one of :data:`PARSE_REASONS`)."""
    from dspy.utils.exceptions import AdapterParseError

    exc = AdapterParseError(
        adapter_name="StrictJSON",
        signature=signature,
        lm_response=completion,
        message=f"{reason}: {message}",
    )
    exc.attune_reason = reason
    exc.attune_message = f"{reason}: {message}"
    return exc


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateError(key)
        out[key] = value
    return out


class _DuplicateError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _load_one(text: str) -> tuple[str, Any, str]:
    """``(status, value, detail)``: status ``ok`` or a reason."""
    body = text.strip()
    if not body:
        return "empty", None, "the answer is empty"
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body").strip()
    # raw control characters inside strings (a literal newline) are unambiguous: allowed
    decoder = json.JSONDecoder(
        object_pairs_hook=_no_duplicates, parse_constant=_reject_constant, strict=False
    )
    try:
        value, end = decoder.raw_decode(body)
    except _DuplicateError as dup:
        return "duplicate_key", None, f"key {dup.key!r} appears more than once"
    except ValueError as exc:
        if _object_inside(body, decoder):
            return "text_outside", None, "the answer does not start with the JSON object"
        return "not_json", None, f"not valid JSON ({exc})"
    rest = body[end:].strip()
    if rest:
        try:
            decoder.raw_decode(rest)
        except ValueError:
            return "text_outside", None, f"text after the JSON object: {rest[:80]!r}"
        return "multiple_objects", None, "more than one JSON value in the answer"
    if not isinstance(value, dict):
        return "not_object", None, f"the answer is a JSON {type(value).__name__}, not an object"
    return "ok", value, ""


def _object_inside(body: str, decoder: json.JSONDecoder, tries: int = 32) -> bool:
    """Whether a JSON object starts at one of the first ``tries`` ``{`` after the start of
    ``body``: prose around a real object (``text_outside``), not garbage that merely holds a
    ``{`` (``not_json``)."""
    at = body.find("{", 1)
    while at > 0 and tries > 0:
        try:
            value, _ = decoder.raw_decode(body, at)
        except _DuplicateError:
            return True  # an object, with a repeated key
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return True
        at = body.find("{", at + 1)
        tries -= 1
    return False


def _unwrap(annotation: Any) -> Any:
    """Strip ``Annotated`` and pydantic ``RootModel`` wrappers."""
    while True:
        if get_origin(annotation) is typing.Annotated:
            annotation = get_args(annotation)[0]
            continue
        root = (
            getattr(annotation, "model_fields", {}).get("root")
            if isinstance(annotation, type)
            else None
        )
        if root is not None:
            annotation = root.annotation
            continue
        return annotation


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _as_int(value: Any) -> int:
    if _is_int(value):
        return int(value)
    if isinstance(value, str) and _INT_LITERAL.match(value.strip()):
        return int(value.strip())
    raise _InvalidError(f"{value!r} is not an integer")


def _check_literal(value: Any, options: tuple[Any, ...]) -> Any:
    for option in options:
        if isinstance(option, bool):
            if value is option:
                return option
        elif isinstance(option, int):
            try:
                if _as_int(value) == option:
                    return option
            except _InvalidError:
                continue
        elif isinstance(option, str) and isinstance(value, str):
            if value.strip().casefold() == option.casefold():
                return option
    raise _InvalidError(f"{value!r} is not one of {list(options)}")


def _check_union(value: Any, args: tuple[Any, ...]) -> Any:
    errors = []
    for arg in args:
        try:
            return check_value(value, arg)
        except ValueError as exc:
            errors.append(str(exc))
    raise _InvalidError("; ".join(errors))


def _check_scalar(value: Any, annotation: Any) -> Any:
    if annotation is str:
        if isinstance(value, str):
            return value
        raise _InvalidError(f"{value!r} is not a string")
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise _InvalidError(f"{value!r} is not true/false")
    if annotation is int:
        return _as_int(value)
    # float
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(float(value)):
            raise _InvalidError(f"{value!r} is not a finite number")
        return float(value)
    raise _InvalidError(f"{value!r} is not a number")


def _check_sequence(value: Any, annotation: Any) -> Any:
    if not isinstance(value, list):
        raise _InvalidError(f"{value!r} is not a list")
    args = get_args(annotation)
    if get_origin(annotation) is tuple and args and args[-1] is not Ellipsis:
        if len(args) != len(value):
            raise _InvalidError(f"expected {len(args)} values, got {len(value)}")
        return tuple(check_value(v, a) for v, a in zip(value, args, strict=True))
    item = args[0] if args else Any
    return [check_value(v, item) for v in value]


def _check_mapping(value: Any, annotation: Any) -> Any:
    if not isinstance(value, dict):
        raise _InvalidError(f"{value!r} is not an object")
    args = get_args(annotation)
    item = args[1] if len(args) == 2 else Any
    return {str(k): check_value(v, item) for k, v in value.items()}


def _check_other(value: Any, annotation: Any) -> Any:
    """Anything else (a pydantic model, a custom type): pydantic's strict validation."""
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(annotation).validate_python(value, strict=True)
    except ValidationError as exc:
        raise _InvalidError(f"{value!r}: {exc.errors()[0]['msg']}") from None


def _check_none(value: Any, annotation: Any) -> Any:
    if value is None:
        return None
    raise _InvalidError(f"{value!r} is not null")


def check_value(value: Any, annotation: Any) -> Any:
    """``value`` read as ``annotation``, strictly (see the module docstring).

    Raises
    ------
    ValueError
        The value does not have the type.
    """
    annotation = _unwrap(annotation)
    origin = get_origin(annotation)
    if origin is Literal:
        return _check_literal(value, get_args(annotation))
    if origin in (Union, types.UnionType):
        return _check_union(value, get_args(annotation))
    if annotation is type(None):
        return _check_none(value, annotation)
    if annotation is Any:
        return value
    if annotation in (str, bool, int, float):
        return _check_scalar(value, annotation)
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return _check_sequence(value, annotation)
    if origin is dict or annotation is dict:
        return _check_mapping(value, annotation)
    return _check_other(value, annotation)


def _field_value(value: Any, annotation: Any) -> Any:
    """Checked value, rebuilt as the declared type when that is a pydantic ``RootModel``."""
    checked = check_value(value, annotation)
    base = annotation
    if get_origin(base) is typing.Annotated:
        base = get_args(base)[0]
    if isinstance(base, type) and "root" in getattr(base, "model_fields", {}):
        return base.model_construct(root=checked)  # type: ignore[attr-defined]
    return checked


def strict_parse(signature: Any, completion: str) -> dict[str, Any]:
    """The output fields of ``signature`` read strictly from ``completion``.

    Raises
    ------
    AdapterParseError
        With ``attune_reason`` set (see :data:`PARSE_REASONS`).
    """
    status, obj, detail = _load_one(completion if isinstance(completion, str) else "")
    if status != "ok":
        raise parse_failure(status, detail, completion, signature)
    fields = signature.output_fields
    missing = [name for name in fields if name not in obj]
    if missing:
        raise parse_failure("missing_field", f"missing field(s) {missing}", completion, signature)
    unknown = [name for name in obj if name not in fields]
    if unknown:
        raise parse_failure(
            "unknown_field", f"unexpected field(s) {unknown}", completion, signature
        )
    out: dict[str, Any] = {}
    for name, info in fields.items():
        try:
            out[name] = _field_value(obj[name], info.annotation)
        except ValueError as exc:
            raise parse_failure(
                "invalid_value", f"field {name!r}: {exc}", completion, signature
            ) from None
    return out
