"""Answer functions for the loopback OpenAI stub: deterministic judges with known behaviour."""

from __future__ import annotations

import json
from typing import Any


def _field(user: str, name: str, following: str) -> str:
    return user.split(f"[[ ## {name} ## ]]")[1].split(following)[0].strip()


def replies(body: dict[str, Any]) -> tuple[str, str]:
    """Reply A and reply B of a pairwise request."""
    user = body["messages"][-1]["content"]
    return _field(user, "reply_a", "[[ ## reply_b ## ]]"), _field(user, "reply_b", "Respond with")


def longer_wins(body: dict[str, Any]) -> str:
    """A consistent judge: the longer reply wins (tie on equal length)."""
    a, b = replies(body)
    verdict = "A" if len(a) > len(b) else "B" if len(b) > len(a) else "tie"
    return json.dumps({"verdict": verdict, "rationale": "the longer reply"})


def always_a(body: dict[str, Any]) -> str:
    """A judge with total position bias."""
    return json.dumps({"verdict": "A", "rationale": "the first reply"})


def read_jsonl_rows(path: object) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (file closed)."""
    from pathlib import Path

    with Path(str(path)).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def requested_fields(body: dict[str, Any]) -> list[str]:
    """Output field names a DSPy JSON request asks for (from its closing instruction)."""
    import re

    user = body["messages"][-1]["content"]
    tail = user.rsplit("Respond with a JSON object", 1)[-1]
    return re.findall(r"`([A-Za-z0-9_]+)`", tail)


def behaviour_rule(body: dict[str, Any]) -> str:
    """A behaviour judge that says yes to items with an odd number (B1, B3, B13, ...)."""
    fields = requested_fields(body)
    answers = {f: "yes" if int(f[1:]) % 2 else "no" for f in fields if f.startswith("B")}
    return json.dumps(answers)


def family_judge(body: dict[str, Any]) -> str:
    """Reference judges that know who wrote a reply by its marker: ``gpt-stub`` gives 6 to
    replies marked ``(g)`` (its own family) and 4 to the rest; any other model gives 4."""
    fields = [f for f in requested_fields(body) if f != "rationale"]
    own = body.get("model") == "gpt-stub" and "(g)" in body["messages"][-1]["content"]
    answer: dict[str, Any] = {f: 6 if own else 4 for f in fields}
    if "rationale" in requested_fields(body):
        answer["rationale"] = "fixed"
    return json.dumps(answer)
