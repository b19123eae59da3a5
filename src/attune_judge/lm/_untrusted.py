"""Untrusted text in prompts: it can never forge a field boundary or a speaker.

The rule (README, "Injection-safe prompts"): every piece of text that comes from data or from a
model — conversation turns, candidate and reference replies, replies of the evaluated model,
answers of earlier calls — passes through :func:`untrusted` before it is put into a prompt.

- **Field markers.** DSPy separates prompt fields with ``[[ ## name ## ]]`` lines. Inside data
  any such marker (any spacing, any number of ``#``) is rewritten as ``(## name ##)``, so a
  candidate reply cannot open a ``reference_reply`` field or claim ``[[ ## completed ## ]]``.
  The project's JSON adapter applies this to every input field, whatever its type, as a second
  line of defence.
- **Speakers.** A conversation is written as blocks ``Person: ...`` / ``Assistant: ...``. A line
  inside untrusted text that starts like a speaker label (``Person:``, ``Assistant:``,
  ``System:``, ``User:``, ``Human:``, ``AI:``, ``Participant:``, ``Model:``; any case, any
  indentation) is prefixed with ``(quoted)``, so only the formatter's own labels start a turn.

Text without markers or label-like lines passes unchanged (prompts of ordinary data, and the
request-cache keys made from them, do not change).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "QUOTED_PREFIX",
    "neutralize",
    "neutralize_markers",
    "neutralize_speakers",
    "neutralize_value",
    "untrusted",
]

QUOTED_PREFIX = "(quoted) "
"""What a label-like line inside untrusted text is prefixed with."""

_MARKER = re.compile(r"\[\s*\[\s*(#+)\s*([^\[\]\n]*?)\s*(#+)\s*\]\s*\]")
_OPEN = re.compile(r"\[\s*\[\s*#")
_CLOSE = re.compile(r"#\s*\]\s*\]")
_SPEAKER = re.compile(
    r"^([ \t>*_\-\"'`]*)(person|assistant|system|user|human|ai|participant|model|bot)"
    r"([*_ \t]*(?:\([^)\n]*\))?[*_ \t]*[:：])",
    re.IGNORECASE | re.MULTILINE,
)


def neutralize_markers(text: str) -> str:
    """``text`` with every DSPy-style field marker ``[[ ## x ## ]]`` defused."""
    if "[" not in text:
        return text
    text = _MARKER.sub(lambda m: f"(## {m.group(2)} ##)", text)
    # half markers that the full pattern missed (a marker split over lines, say)
    text = _OPEN.sub("( #", text)
    return _CLOSE.sub("# )", text)


def neutralize_speakers(text: str) -> str:
    """``text`` with every line that starts like a speaker label prefixed ``(quoted)``."""
    if ":" not in text and "：" not in text:
        return text
    return _SPEAKER.sub(lambda m: QUOTED_PREFIX + m.group(0), text)


def neutralize(text: str) -> str:
    """Both neutralisations (field markers, then speaker labels)."""
    return neutralize_speakers(neutralize_markers(text))


untrusted = neutralize
"""Alias used at the call sites: ``untrusted(item.candidate)``."""


def neutralize_value(value: Any) -> Any:
    """Field markers defused in every string inside ``value`` (lists and dicts walked)."""
    if isinstance(value, str):
        return neutralize_markers(value)
    if isinstance(value, list):
        return [neutralize_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(neutralize_value(v) for v in value)
    if isinstance(value, dict):
        return {k: neutralize_value(v) for k, v in value.items()}
    return value
