"""The prompt of a one-criterion question: a bare answer whose first token is the score.

One call asks one criterion (or one checklist question), so a small model is not anchored by
the order of the fields, and the answer's first token is the score position. The system
message is the rubric's instructions plus the answer rule; the user message holds the
conversation, the reply, the reference (optional) and the criterion with its anchors.
Labelled demonstrations, when given, come first as earlier user/assistant turns.
An engine that can continue an assistant message (the embedded model) gets the answer
prefix (``Rating:`` / ``Answer:``) prefilled, which puts the next token at the score position.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from attune_judge.data import JudgeItem
from attune_judge.judges._base import format_conversation
from attune_judge.lm import QUOTED_PREFIX, untrusted
from attune_judge.rubrics import Criterion, Rubric

__all__ = [
    "CHECKLIST_LABELS",
    "CriterionDemo",
    "answer_prefix",
    "criterion_labels",
    "criterion_messages",
    "multi_token_levels",
    "untrusted_text",
]

CHECKLIST_LABELS: dict[int, tuple[str, ...]] = {0: ("no",), 1: ("yes",)}
"""Checklist answers: level 0 = no, 1 = yes (spellings compared case-insensitively)."""

_LABEL = re.compile(
    r"^([ \t>*_\-\"'`]*)(conversation|reply to evaluate|reference reply|criterion|question|"
    r"rating|answer|score)\b[^\n:：]{0,40}[:：]",
    re.IGNORECASE | re.MULTILINE,
)


def untrusted_text(text: str) -> str:
    """``text`` safe to embed: speakers and markers neutralised (:func:`attune_judge.lm.untrusted`)
    and lines that start like this prompt's own labels (``Rating:``, ``Criterion:``, ...)
    prefixed with ``(quoted)``, so a reply cannot write its own score line."""
    return _quote_labels(untrusted(text))


def _quote_labels(text: str) -> str:
    if ":" not in text and "：" not in text:
        return text
    return _LABEL.sub(lambda m: QUOTED_PREFIX + m.group(0), text)


class CriterionDemo(BaseModel):
    """A labelled demonstration for one criterion: an item and the score people gave it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    criterion: str
    """The criterion (or checklist question) id."""
    conversation: str
    """The conversation as shown to the judge."""
    candidate: str
    """The reply."""
    score: int
    """The label (a scale level; 0/1 for checklist no/yes)."""


def criterion_labels(
    rubric: Rubric, criterion: Criterion, *, one_token: bool = True
) -> dict[int, tuple[str, ...]]:
    """Level -> the answer texts that mean it (numbers; ``yes``/``no`` for checklists).

    ``one_token`` (expected scores, read from the first answer token) needs levels 0..9.
    """
    if rubric.kind == "checklist":
        return CHECKLIST_LABELS
    scale = rubric.scale_of(criterion.id)
    bad = [level for level in scale.levels if not 0 <= level <= 9]
    if bad and one_token:
        raise ValueError(
            f"criterion {criterion.id!r}: one-token answers need levels 0..9, not {bad}"
        )
    return {level: (str(level),) for level in scale.levels}


def multi_token_levels(rubric: Rubric) -> list[str]:
    """``criterion (min-max)`` of every criterion whose levels are not one digit each (expected
    scores read one token: they cannot score those)."""
    if rubric.kind == "checklist":
        return []
    out = []
    for c in rubric.criteria:
        scale = rubric.scale_of(c.id)
        if any(not 0 <= level <= 9 for level in scale.levels):
            out.append(f"{c.id} ({scale.min}-{scale.max})")
    return out


def _answer_rule(rubric: Rubric, criterion: Criterion) -> str:
    if rubric.kind == "checklist":
        return "Answer with one word: yes or no."
    scale = rubric.scale_of(criterion.id)
    unit = "single digit" if 0 <= scale.min and scale.max <= 9 else "whole number"
    return f"Answer with a {unit} from {scale.min} to {scale.max} and nothing else."


def answer_prefix(rubric: Rubric) -> str:
    """The prefilled start of the answer (engines that continue an assistant message)."""
    return "Answer:" if rubric.kind == "checklist" else "Rating:"


def _criterion_text(rubric: Rubric, criterion: Criterion) -> str:
    if rubric.kind == "checklist":
        return f"Question: {criterion.description}"
    scale = rubric.scale_of(criterion.id)
    lines = [
        f"Criterion: {criterion.name} ({scale.min}-{scale.max}). {criterion.description}",
        *(f"{level} = {text}" for level, text in sorted(criterion.anchors.items())),
    ]
    return "\n".join(lines)


def _user_text(
    rubric: Rubric,
    criterion: Criterion,
    conversation: str,
    candidate: str,
    reference: str | None,
) -> str:
    parts = [f"Conversation:\n{conversation}", f"Reply to evaluate:\n{untrusted_text(candidate)}"]
    if reference is not None:
        parts.append(
            f"Reference reply (the one the person preferred):\n{untrusted_text(reference)}"
        )
    parts += [_criterion_text(rubric, criterion), _answer_rule(rubric, criterion)]
    return "\n\n".join(parts)


def _demo_answer(rubric: Rubric, demo: CriterionDemo) -> str:
    if rubric.kind == "checklist":
        return "yes" if demo.score else "no"
    return str(demo.score)


def criterion_messages(
    rubric: Rubric,
    criterion: Criterion,
    item: JudgeItem,
    *,
    use_reference: bool,
    prefill: bool,
    demos: Sequence[CriterionDemo] = (),
) -> list[dict[str, Any]]:
    """Chat messages asking ``criterion`` about ``item`` (system first).

    Parameters
    ----------
    rubric, criterion
        What to ask.
    item
        The conversation and reply (and reference when ``use_reference``).
    use_reference
        Show the reference reply.
    prefill
        End with an assistant message holding :func:`answer_prefix` (the model continues it).
    demos
        Labelled examples of this criterion, shown as earlier turns (their answers included).
    """
    system = f"{rubric.instructions.strip()}\n\n{_answer_rule(rubric, criterion)}"
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    prefix = answer_prefix(rubric)
    for demo in demos:
        # a demo's conversation is already formatted (speaker labels kept; its texts were
        # neutralised by format_conversation)
        conversation = _quote_labels(demo.conversation)
        text = _user_text(rubric, criterion, conversation, demo.candidate, None)
        answer = _demo_answer(rubric, demo)
        messages.append({"role": "user", "content": text})
        messages.append(
            {"role": "assistant", "content": f"{prefix} {answer}" if prefill else answer}
        )
    reference = (item.reference or "") if use_reference else None
    conversation = _quote_labels(format_conversation(item.context))
    user = _user_text(rubric, criterion, conversation, item.candidate, reference)
    messages.append({"role": "user", "content": user})
    if prefill:
        messages.append({"role": "assistant", "content": prefix})
    return messages
