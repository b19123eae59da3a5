"""ESConv (Liu et al. 2021) emotional-support conversations, in two schemas.

- ``fado-reformat/{train,valid,test}_rl.jsonl``: a third-party reformat of the full ESConv
  (1,300 conversations): messages ``{text, speaker: usr|sys, strategy | rating}``, end-of-chat
  ``empathy``/``relevance`` (``-1`` = not answered) and emotion intensities.
- ``original-thu-coai/FailedESConv.json``: 196 rejected conversations in the original schema:
  messages ``{speaker: speaker|listener, annotation: {strategy | feedback}, content}`` and a
  ``survey_score`` with ``seeker`` and ``supporter`` parts.

Records: one ``JudgeItem`` per supporter message that follows at least one seeker message
(item id ``<conversation>:<n>``, n = the supporter message's 1-based position) and one
conversation-level item (id ``<conversation>``); the supporter's strategy label as a ``Rating``
with a text value (rater ``supporter``); the seeker's in-chat feedback (1-5) as a ``Rating`` on
the supporter message just before it (rater ``seeker``, group ``participant``); the end-of-chat
survey as conversation-level ``Rating`` records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from attune_judge.data._records import ChatMessage, JudgeItem, Rating
from attune_judge.data.adapters._result import (
    AdapterReport,
    AdapterResult,
    messages_to_item,
    parse_number,
    value_ranges,
)
from attune_judge.errors import UserError

__all__ = ["ESCONV_STRATEGIES", "convert_esconv"]

ESCONV_STRATEGIES = (
    "Question",
    "Restatement or Paraphrasing",
    "Reflection of feelings",
    "Self-disclosure",
    "Affirmation and Reassurance",
    "Providing Suggestions",
    "Information",
    "Others",
)
"""The eight strategies of ``strategy.json``."""
# spelling variants of the original schema; labels outside the eight are kept and reported
_STRATEGY_ALIASES = {
    "Questions": "Question",
    "Other": "Others",
    "Restatement": "Restatement or Paraphrasing",
}
_FADO_SPLITS = ("train", "valid", "test")
_SCALE = (1.0, 5.0)
ItemLevel = Literal["message", "conversation", "both"]


class _Conv:
    """One conversation in a common shape: (role, text, strategy, feedback) per message."""

    def __init__(self, conv_id: str, meta: dict[str, Any]) -> None:
        self.conv_id = conv_id
        self.meta = meta
        self.messages: list[tuple[str, str, str | None, float | None]] = []
        self.survey: list[tuple[str, str, float | None]] = []  # (rater, dimension, value)


def _num(value: object, where: str) -> float | None:
    try:
        return parse_number(value)
    except ValueError:
        raise UserError(f"{where}: not a number: {value!r}") from None


def _read_fado(path: Path, split: str) -> list[_Conv]:
    convs = []
    for n, line in enumerate(path.read_text("utf-8").splitlines()):
        if not line.strip():
            continue
        where = f"{path}:{n + 1}"
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not valid JSON: {exc.msg}") from None
        meta = {k: d.get(k) for k in ("emotion_type", "problem_type", "situation")}
        c = _Conv(f"esconv:{split}:{n:04d}", {**meta, "file": f"fado-reformat/{path.name}"})
        for i, m in enumerate(d.get("dialog", [])):
            role = {"usr": "user", "sys": "assistant"}.get(m.get("speaker"))
            if role is None:
                raise UserError(f"{where}: $.dialog[{i}].speaker: {m.get('speaker')!r}")
            fb = _num(m.get("rating"), f"{where}: $.dialog[{i}].rating")
            c.messages.append((role, str(m.get("text", "")).strip(), m.get("strategy"), fb))
        for key, dim in (
            ("empathy", "empathy"),
            ("relevance", "relevance"),
            ("init_intensity", "initial_emotion_intensity"),
            ("final_intensity", "final_emotion_intensity"),
        ):
            value = _num(d.get(key), f"{where}: $.{key}")
            c.survey.append(("seeker", dim, None if value == -1 else value))
        convs.append(c)
    return convs


def _read_failed(path: Path) -> list[_Conv]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON: {exc.msg}") from None
    convs = []
    for n, d in enumerate(data):
        where = f"{path}: $[{n}]"
        meta = {k: d.get(k) for k in ("emotion_type", "problem_type", "situation")}
        meta.update(experience_type=d.get("experience_type"), file=path.name)
        c = _Conv(f"esconv:failed:{n:04d}", meta)
        for i, m in enumerate(d.get("dialog", [])):
            role = {"speaker": "user", "listener": "assistant"}.get(m.get("speaker"))
            if role is None:
                raise UserError(f"{where}.dialog[{i}].speaker: {m.get('speaker')!r}")
            ann = m.get("annotation") or {}
            fb = _num(ann.get("feedback"), f"{where}.dialog[{i}].annotation.feedback")
            text = str(m.get("content", "")).strip()
            c.messages.append((role, text, ann.get("strategy"), fb))
        survey = d.get("survey_score") or {}
        for rater in ("seeker", "supporter"):
            for key, value in (survey.get(rater) or {}).items():
                c.survey.append((rater, key, _num(value, f"{where}.survey_score.{rater}.{key}")))
        convs.append(c)
    return convs


def _context(messages: list[tuple[str, str, str | None, float | None]]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for role, text, _, _ in messages:
        if out and out[-1].role == role:
            out[-1].content += "\n" + text
        else:
            out.append(ChatMessage(role=role, content=text))
    return out


def _rating(iid: str, conv: _Conv, rater: str, dim: str, value: float | str | None) -> Rating:
    meta: dict[str, Any] = {"source": conv.meta["file"]}
    if not isinstance(value, str):
        meta.update(scale_min=_SCALE[0], scale_max=_SCALE[1])
    group = "participant" if rater == "seeker" else "supporter"
    return Rating(
        item_id=iid,
        rater=rater,
        rater_group=group,
        dimension=dim,
        value=value,
        cluster=conv.conv_id,
        metadata=meta,
    )


def _convert_one(conv: _Conv, level: ItemLevel, result: AdapterResult, rep: AdapterReport) -> None:
    last_sys: str | None = None
    covered: list[str] = []
    n_sys = 0
    for i, (role, text, strategy, feedback) in enumerate(conv.messages):
        if role == "assistant":
            n_sys += 1
            iid = f"{conv.conv_id}:{n_sys}"
            label = _STRATEGY_ALIASES.get(strategy or "", strategy)
            if strategy is not None:
                r = _rating(iid, conv, "supporter", "strategy", label)
                r.metadata["original_label"] = strategy
                result.ratings.append(r)
                if label not in ESCONV_STRATEGIES:
                    rep.unmatched["strategy labels outside strategy.json"].append(
                        f"{iid}: {strategy}"
                    )
            context = _context(conv.messages[:i])
            if level != "conversation" and any(m.role == "user" for m in context):
                result.items.append(
                    JudgeItem(
                        item_id=iid,
                        conversation_id=conv.conv_id,
                        turn=n_sys,
                        context=context,
                        candidate=text,
                        candidate_model="human-supporter",
                        metadata={**conv.meta, "strategy": label, "scope": "message"},
                    )
                )
            elif level != "conversation":
                rep.unmatched["supporter messages before any seeker message (no item)"].append(iid)
            last_sys = iid
            covered.append(iid)
        elif feedback is not None:
            if last_sys is None:
                rep.unmatched["feedback before any supporter message"].append(
                    f"{conv.conv_id} message {i}"
                )
                continue
            r = _rating(last_sys, conv, "seeker", "feedback", feedback)
            r.metadata["covers_items"] = covered
            result.ratings.append(r)
            covered = []
    for rater, dim, value in conv.survey:
        result.ratings.append(_rating(conv.conv_id, conv, rater, dim, value))
    if level != "message":
        msgs = _context(conv.messages)
        result.items.append(
            messages_to_item(conv.conv_id, conv.conv_id, msgs, "human-supporter", conv.meta)
        )


def convert_esconv(src_dir: Path, item_level: ItemLevel = "both") -> AdapterResult:
    """Convert the ESConv files found under ``src_dir``.

    Parameters
    ----------
    src_dir
        A folder with ``fado-reformat/*_rl.jsonl`` and/or ``original-thu-coai/FailedESConv.json``
        (either may be absent, not both).
    item_level
        ``message`` (one item per supporter message), ``conversation`` (one per conversation)
        or ``both``.
    """
    src = Path(src_dir)
    fado = [(s, src / "fado-reformat" / f"{s}_rl.jsonl") for s in _FADO_SPLITS]
    failed = src / "original-thu-coai" / "FailedESConv.json"
    convs: list[_Conv] = []
    rep = AdapterReport(dataset="esconv", source=str(src))
    for key in (
        "strategy labels outside strategy.json",
        "supporter messages before any seeker message (no item)",
        "feedback before any supporter message",
    ):
        rep.unmatched[key] = []
    for split, path in fado:
        if path.exists():
            part = _read_fado(path, split)
            rep.counts[f"fado_{split}_conversations"] = len(part)
            convs += part
        else:
            rep.notes.append(f"{path}: not found")
    if failed.exists():
        part = _read_failed(failed)
        rep.counts["failed_conversations"] = len(part)
        convs += part
    else:
        rep.notes.append(f"{failed}: not found")
    if not convs:
        raise UserError(f"{src}: no ESConv files found (fado-reformat/*_rl.jsonl, {failed.name})")
    result = AdapterResult(report=rep)
    for conv in convs:
        _convert_one(conv, item_level, result, rep)
    scales = {d: _SCALE for d in {r.dimension for r in result.ratings}}
    rep.value_ranges, outside = value_ranges(result.ratings, scales)
    rep.unmatched["values outside the declared scale"] = outside
    no_survey = [c.conv_id for c in convs if not any(r == "seeker" for r, _, _ in c.survey)]
    rep.unmatched["conversations without a seeker end-of-chat survey"] = no_survey
    rep.counts.update(
        conversations=len(convs),
        messages=sum(len(c.messages) for c in convs),
        supporter_messages=sum(1 for c in convs for m in c.messages if m[0] == "assistant"),
        feedback_ratings=sum(r.dimension == "feedback" for r in result.ratings),
        strategy_ratings=sum(r.dimension == "strategy" for r in result.ratings),
        ratings=len(result.ratings),
        items=len(result.items),
    )
    rep.notes += [
        "fado-reformat: end-of-chat empathy/relevance -1 = not answered, kept as value None",
        "FailedESConv: 'speaker' is the seeker, 'listener' the supporter; strategy spellings "
        f"normalised {_STRATEGY_ALIASES}, original in metadata.original_label",
        "seeker feedback is attached to the supporter message just before it; "
        "metadata.covers_items lists the supporter messages since the previous feedback",
    ]
    return result
