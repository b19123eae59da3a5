"""Inspect AI evaluation logs as attune-judge records (the optional ``inspect`` extra).

An Inspect log (``.eval`` or ``.json``, or a folder of them) is read only through Inspect's
own public log API (:func:`inspect_ai.log.read_eval_log`, :func:`inspect_ai.log.list_eval_logs`),
never by parsing its files here. Two views of the same samples:

- :func:`inspect_judge_items`: each sample's input messages and the model's output become a
  :class:`~attune_judge.data.JudgeItem` (the candidate reply, ``candidate_model`` = the log's
  model; the sample's text target, if any, is the reference), so an attune-judge judge scores
  what Inspect generated;
- :func:`inspect_judgments`: each Inspect scorer's score of a sample becomes a
  :class:`~attune_judge.data.Judgment` (judge id ``inspect:<scorer>``), so ``calibrate`` and
  ``rank`` can say how far that scorer agrees with people.

Item ids: the sample id, then ``epoch<N>`` when a log ran several epochs, then the model when
the logs hold several models (``<sample id>[:epoch<N>][:<model>]``): a human label names
the reply it rated by that id. The conversation (the bootstrap's cluster) is the sample id.

Score values (:data:`LETTER_GRADES`, as Inspect's own ``value_to_float`` maps them): numbers
are kept, ``True``/``False`` are 1/0, the letter grades ``C`` (correct) 1, ``P`` (partial)
0.5, ``I`` (incorrect) 0 and ``N`` (no answer) 0, and ``yes``/``no``/``true``/``false`` 1/0.
Anything else (a dict or list value, another string, NaN: Inspect's "unscored") is a recorded
failure (status ``parse_error``), never a score; a sample that errored is ``lm_error``.
``normalized`` (the 0-1 score ``rank`` uses) is the value when every value of that scorer lies
in [0, 1] (grades, booleans, accuracies); otherwise only ``overall`` is set.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attune_judge.data._records import ChatMessage, JudgeItem, Judgment, make_id
from attune_judge.errors import UserError

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

__all__ = [
    "INSPECT_EXTRA",
    "LETTER_GRADES",
    "InspectSample",
    "inspect_judge_items",
    "inspect_judgments",
    "inspect_log_api",
    "inspect_samples",
    "is_inspect_log",
    "scorer_judge_id",
]

INSPECT_EXTRA = "pip install 'attune-judge[inspect]'"
"""The command that installs what reading and writing Inspect logs needs."""

LETTER_GRADES: dict[str, float] = {
    "C": 1.0,
    "P": 0.5,
    "I": 0.0,
    "N": 0.0,
    "yes": 1.0,
    "no": 0.0,
    "true": 1.0,
    "false": 0.0,
}
"""Inspect's string score values and the numbers they stand for (Inspect's ``value_to_float``
defaults: correct 1, partial 0.5, incorrect and no answer 0; ``yes``/``true`` 1, ``no``/
``false`` 0, compared case-insensitively)."""

_SNIFF = 512
_JSON_LOG_START = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
"""How an Inspect ``.json`` log begins (``EvalLog`` writes ``version`` then ``status``)."""


def inspect_log_api() -> Any:
    """``inspect_ai.log``, or a one-line :class:`UserError` naming the extra to install."""
    try:
        import inspect_ai.log as log_api
    except ImportError:
        raise UserError(
            f"Inspect AI logs need the inspect extra: {INSPECT_EXTRA} (inspect_ai is not installed)"
        ) from None
    return log_api


def _looks_like_json_log(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF)
    except OSError:
        return False
    return _JSON_LOG_START.match(head) is not None


def is_inspect_log(path: Path) -> bool:
    """True for an Inspect log file (``.eval``, or a ``.json`` that starts like one) or a
    folder holding one that is not a run directory (checked without Inspect installed, so its
    absence can be named)."""
    path = Path(path)
    if path.is_dir():
        if (path / "judgments.jsonl").exists():
            return False  # a run directory (an exported log inside it stays the run's)
        return any(
            p.suffix == ".eval" or (p.suffix == ".json" and _looks_like_json_log(p))
            for p in path.rglob("*")
            if p.is_file()
        )
    if path.suffix == ".eval":
        return True
    return path.suffix == ".json" and path.is_file() and _looks_like_json_log(path)


def _log_files(path: Path, log_api: Any) -> list[str]:
    if not path.exists():
        raise UserError(f"{path}: no such Inspect log or folder")
    if not path.is_dir():
        return [str(path)]
    files = [info.name for info in log_api.list_eval_logs(str(path), descending=False)]
    if not files:
        raise UserError(f"{path}: no Inspect log (.eval or .json) in this folder")
    return sorted(files)


def _read_logs(path: Path) -> list[EvalLog]:
    log_api = inspect_log_api()
    logs = []
    for name in _log_files(Path(path), log_api):
        try:
            logs.append(log_api.read_eval_log(name))
        except Exception as exc:  # Inspect raises its own and pydantic's errors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise UserError(
                f"{_short(name)}: not a readable Inspect log ({type(exc).__name__}: {first})"
            ) from None
    return logs


def _short(name: str) -> str:
    return name.removeprefix("file://")


@dataclass(frozen=True)
class InspectSample:
    """One sample of one Inspect log, with the id attune-judge gives its reply."""

    item_id: str
    """``<sample id>[:epoch<N>][:<model>]`` (see the module docstring)."""
    log: str
    """The log file it came from."""
    model: str
    """The log's model (the candidate model)."""
    task: str
    """The log's task name."""
    sample: EvalSample
    """Inspect's sample record."""


def inspect_samples(path: Path) -> list[InspectSample]:
    """Every sample of the Inspect log (or folder of logs) at ``path``, in log order.

    Raises
    ------
    UserError
        No extra installed, no log, an unreadable log, a log without samples, or the same
        sample (id, epoch, model) in two logs.
    """
    logs = _read_logs(path)
    models = {log.eval.model for log in logs}
    out: list[InspectSample] = []
    seen: dict[str, str] = {}
    for log in logs:
        name = _short(log.location)
        samples = log.samples or []
        if not samples:
            raise UserError(
                f"{name}: the Inspect log holds no samples (status {log.status}); "
                "run the task to completion first"
            )
        epochs = max(s.epoch for s in samples) > 1
        for s in samples:
            item_id = make_id(
                s.id,
                f"epoch{s.epoch}" if epochs else None,
                log.eval.model if len(models) > 1 else None,
            )
            if item_id in seen:
                raise UserError(
                    f"{name}: sample {s.id!r} (epoch {s.epoch}, model {log.eval.model}) is "
                    f"also in {seen[item_id]}; give each log of a model once"
                )
            seen[item_id] = name
            out.append(InspectSample(item_id, name, log.eval.model, log.eval.task, s))
    return out


def _message(msg: Any) -> ChatMessage | None:
    role = getattr(msg, "role", None)
    if role not in ("system", "user", "assistant"):
        return None  # tool results: counted in the item's metadata, not shown as chat
    return ChatMessage(role=role, content=msg.text)


def _context(sample: EvalSample) -> tuple[list[ChatMessage], int]:
    if isinstance(sample.input, str):
        return [ChatMessage(role="user", content=sample.input)], 0
    messages = [_message(m) for m in sample.input]
    return [m for m in messages if m is not None], sum(m is None for m in messages)


def _reference(target: str | list[str]) -> str | None:
    if isinstance(target, list):
        target = target[0] if len(target) == 1 else ""
    return target if target.strip() else None


def inspect_judge_items(path: Path) -> list[JudgeItem]:
    """The candidate replies of an Inspect log: one :class:`JudgeItem` per sample with an
    output (``context`` = the sample's input messages, ``candidate`` = the output's text,
    ``candidate_model`` = the log's model, ``reference`` = a single text target).

    Samples that errored or have an empty output have no reply to judge: they are left out
    and listed in an error if no sample is left.
    """
    items: list[JudgeItem] = []
    skipped: list[str] = []
    for rec in inspect_samples(path):
        s = rec.sample
        reply = s.output.completion if s.output is not None else ""
        if s.error is not None or not reply.strip():
            why = f"error: {s.error.message}" if s.error is not None else "empty output"
            skipped.append(f"{rec.log}: sample {s.id!r}: {why}")
            continue
        context, dropped = _context(s)
        metadata: dict[str, Any] = {
            "source": "inspect",
            "log": rec.log,
            "task": rec.task,
            "sample_id": s.id,
            "epoch": s.epoch,
        }
        if dropped:
            metadata["tool_messages_dropped"] = dropped
        if s.metadata:
            metadata["sample_metadata"] = s.metadata
        items.append(
            JudgeItem(
                item_id=rec.item_id,
                conversation_id=str(s.id),
                context=context,
                candidate=reply,
                candidate_model=rec.model,
                reference=_reference(s.target),
                metadata=metadata,
            )
        )
    if not items:
        raise UserError(f"{path}: no Inspect sample has an output to judge", skipped[:5])
    return items


def scorer_judge_id(scorer: str) -> str:
    """The judge id of an Inspect scorer's judgments: ``inspect:<scorer>``."""
    return f"inspect:{scorer}"


def _value(value: Any) -> float | str:
    """The number a score value stands for, or why it is none."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        if math.isnan(value):
            return "unscored (NaN)"
        if math.isinf(value):
            return f"value {value!r} is infinite"
        return float(value)
    if isinstance(value, str):
        grade = LETTER_GRADES.get(value) if value in "CPIN" else LETTER_GRADES.get(value.lower())
        if grade is not None:
            return grade
        return f"value {value!r} is not a number or a grade ({', '.join(LETTER_GRADES)})"
    return f"value of type {type(value).__name__} is not a scalar score"


def _scorers(recs: Sequence[InspectSample]) -> list[str]:
    names: Counter[str] = Counter()
    for rec in recs:
        names.update((rec.sample.scores or {}).keys())
    return sorted(names)


def inspect_judgments(
    path: Path, scorers: Sequence[str] | None = None
) -> tuple[list[Judgment], list[str]]:
    """The Inspect scorers' scores of a log (or folder of logs) as Judgment records.

    Parameters
    ----------
    path
        An Inspect log or a folder of logs.
    scorers
        Only these scorers (default: every scorer of the logs).

    Returns
    -------
    tuple[list[Judgment], list[str]]
        One judgment per (sample, scorer), judge id ``inspect:<scorer>``; and the scorers read.

    Raises
    ------
    UserError
        A log with no scores, an unknown scorer name, or no scorer value usable as a number.
    """
    recs = inspect_samples(path)
    found = _scorers(recs)
    if not found:
        raise UserError(
            f"{path}: no sample of the Inspect log has a score; run the task with a scorer "
            "(or score the log with `inspect score`) first"
        )
    chosen = list(scorers) if scorers else found
    unknown = [s for s in chosen if s not in found]
    if unknown:
        raise UserError(
            f"{path}: no scorer named {', '.join(map(repr, unknown))} in the Inspect log; "
            f"its scorers: {', '.join(found)}"
        )
    out: list[Judgment] = []
    for name in chosen:
        mine = [_judgment(rec, name) for rec in recs]
        ok = [j.overall for j in mine if j.status == "ok" and j.overall is not None]
        if not ok:
            reasons = sorted({j.error or "" for j in mine})[:3]
            raise UserError(
                f"{path}: scorer {name!r} has no score usable as a number ({'; '.join(reasons)})"
            )
        unit = all(0.0 <= v <= 1.0 for v in ok)
        out.extend(
            j.model_copy(update={"normalized": j.overall}) if unit and j.status == "ok" else j
            for j in mine
        )
    return out, chosen


def _judgment(rec: InspectSample, scorer: str) -> Judgment:
    s = rec.sample
    common: dict[str, Any] = {
        "item_id": rec.item_id,
        "judge_id": scorer_judge_id(scorer),
        "conversation_id": str(s.id),
        "candidate_model": rec.model,
    }
    if s.completed_at:
        common["timestamp"] = str(s.completed_at)
    if s.error is not None:
        return Judgment(**common, status="lm_error", error=f"sample error: {s.error.message}")
    score = (s.scores or {}).get(scorer)
    if score is None:
        return Judgment(**common, status="parse_error", error=f"no {scorer!r} score")
    value = _value(score.value)
    details = {"scorer": scorer, "value": score.value, "log": rec.log}
    if score.answer is not None:
        details["answer"] = score.answer
    if isinstance(value, str):
        reason = f"{value}: {score.reason}" if score.reason else value
        return Judgment(
            **common,
            status="parse_error",
            error=reason,
            rationale=score.explanation,
            details=details,
        )
    return Judgment(**common, overall=value, rationale=score.explanation, details=details)
