"""The answers of the fault-injecting server: valid objects for a JSON schema, the fields a
bad answer corrupts, and token log-probabilities."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["answer_for_schema", "bare_answer", "integer_fields", "schema_of", "token_logprobs"]


def _levels(schema: Mapping[str, Any]) -> list[Any] | None:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return list(enum)
    const = schema.get("const")
    return [const] if const is not None else None


def _value(schema: Mapping[str, Any], rng: random.Random, defs: Mapping[str, Any]) -> Any:
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return _value(defs.get(name, {}), rng, defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _value(schema[key][0], rng, defs)
    levels = _levels(schema)
    if levels is not None:
        return rng.choice(levels)
    kind = schema.get("type")
    if kind == "integer":
        low, high = int(schema.get("minimum", 1)), int(schema.get("maximum", 5))
        return rng.randint(low, high)
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if kind == "array":
        item = schema.get("items", {"type": "string"})
        return [_value(item, rng, defs)]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _value(v, rng, defs) for k, v in props.items()}
    return "A short answer."


def answer_for_schema(schema: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """A valid answer object for a JSON ``schema`` (enum values drawn with ``rng``)."""
    defs = {**schema.get("$defs", {}), **schema.get("definitions", {})}
    props = schema.get("properties", {})
    return {name: _value(sub, rng, defs) for name, sub in props.items()}


def schema_of(body: Mapping[str, Any]) -> dict[str, Any]:
    fmt = body.get("response_format") or {}
    if isinstance(fmt, dict):
        if isinstance(fmt.get("schema"), dict):
            return dict(fmt["schema"])
        inner = fmt.get("json_schema")
        if isinstance(inner, dict) and isinstance(inner.get("schema"), dict):
            return dict(inner["schema"])
    return {}


def integer_fields(schema: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for name, sub in schema.get("properties", {}).items():
        levels = _levels(sub)
        ints = levels is not None and all(
            isinstance(v, int) and not isinstance(v, bool) for v in levels
        )
        if sub.get("type") == "integer" or ints:
            out[name] = max(levels) if levels else int(sub.get("maximum", 7))
    return out


_ALTERNATIVES = ("1", "2", "3", "4", "5", "6", "7", "yes", "no")


def token_logprobs(content: str, top: int) -> dict[str, Any]:
    """OpenAI-style ``logprobs`` of ``content``'s tokens (words and spaces): each token at
    probability 0.9, with up to ``top`` alternatives (levels and yes/no) sharing a little."""
    out = []
    for token in re.findall(r"\S+|\s+", content):
        alts = [{"token": token, "logprob": math.log(0.9), "bytes": list(token.encode())}]
        for other in _ALTERNATIVES:
            if other != token and len(alts) < top:
                alts.append(
                    {"token": other, "logprob": math.log(0.01), "bytes": list(other.encode())}
                )
        out.append({**alts[0], "top_logprobs": alts[:top]})
    return {"content": out}


_RANGE = re.compile(r"from (\d) to (\d)")


def bare_answer(body: Mapping[str, Any], rng: random.Random) -> str:
    """The bare answer to a one-criterion question: ``yes``/``no`` when the prompt asks for
    one, else a digit in the range it names (``from 1 to 5``), else a short sentence."""
    text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
    if "yes or no" in text:
        return rng.choice(["yes", "no"])
    found = _RANGE.search(text)
    if found:
        return str(rng.randint(int(found.group(1)), int(found.group(2))))
    return "A short answer."
