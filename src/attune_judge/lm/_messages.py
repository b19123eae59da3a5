"""Engine plumbing shared by our DSPy engines: request → chat messages, text → ``Response``."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dspy.lm15 import Request, Response

__all__ = ["make_response", "prompt_size", "request_key", "request_messages"]


def request_messages(request: Request) -> list[dict[str, str]]:
    """The request as OpenAI-style chat messages (``system`` first when present).

    Parameters
    ----------
    request
        The canonical request DSPy hands to an engine.

    Returns
    -------
    list of dict
        ``{"role": ..., "content": ...}`` dictionaries, text parts joined.
    """
    messages: list[dict[str, str]] = []
    if request.system is not None:
        system = request.system
        text = (
            system if isinstance(system, str) else "".join(getattr(p, "text", "") for p in system)
        )
        messages.append({"role": "system", "content": text})
    for message in request.messages:
        messages.append({"role": message.role, "content": message.text or ""})
    return messages


def request_key(messages: list[dict[str, str]]) -> str:
    """SHA-256 of the canonical JSON of ``messages`` (the replay key)."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def make_response(
    text: str,
    *,
    model: str,
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    finish_reason: str = "stop",
) -> Response:
    """Wrap ``text`` as a canonical assistant ``Response`` with token counts.

    When no counts are given they are estimated as whitespace-separated words.
    ``finish_reason`` is ``stop`` or, for an answer cut off by the token limit, ``length``.
    """
    from dspy.lm15 import Message, Response, TextPart, Usage

    return Response(
        id=None,
        model=model,
        message=Message.assistant([TextPart(text)]),
        finish_reason=finish_reason,
        usage=Usage(
            input_tokens=prompt_tokens if prompt_tokens is not None else 0,
            output_tokens=completion_tokens if completion_tokens is not None else len(text.split()),
        ),
    )


def prompt_size(messages: list[dict[str, Any]]) -> int:
    """Whitespace word count of all message contents (a rough token estimate)."""
    return sum(len(str(m.get("content", "")).split()) for m in messages)
