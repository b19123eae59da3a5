"""Reading a run's inputs into JudgeItems, and fingerprinting the input files.

``DATA`` is either AttuneBench data (a folder of ``conversation_*.json``, one ``.json`` file, or
a ``.jsonl`` of conversations) or a JudgeItem JSONL file. Candidates come from a candidates
JSONL file, or — without one — from the pseudo-models every AttuneBench turn carries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from attune_judge.data import (
    JudgeItem,
    attunebench_to_judge_items,
    load_attunebench,
    read_jsonl,
    reading_utf8,
)
from attune_judge.data.adapters import inspect_judge_items, is_inspect_log
from attune_judge.errors import UserError
from attune_judge.runner._candidates import PSEUDO_MODELS, items_for_candidates, read_candidates

__all__ = [
    "attunebench_items",
    "fingerprint_inputs",
    "inspect_log_input",
    "is_judge_item_jsonl",
    "load_judge_items",
]

_CHUNK = 1 << 20


def _files_under(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
    return [path]


def fingerprint_inputs(paths: Sequence[Path]) -> tuple[str, dict[str, str]]:
    """SHA-256 over the content of the input files (folders: every file in sorted order).

    Returns
    -------
    tuple[str, dict[str, str]]
        The overall fingerprint (``sha256:<hex>``), and one ``sha256:<hex>`` per input path.
        The overall hash covers each file's path relative to its input and its content, so
        renaming a file inside a data folder changes it, moving the folder does not.
    """
    overall = hashlib.sha256()
    per_input: dict[str, str] = {}
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise UserError(f"{path}: no such file or folder")
        one = hashlib.sha256()
        for f in _files_under(path):
            rel = f.relative_to(path).as_posix() if path.is_dir() else f.name
            one.update(rel.encode() + b"\0")
            with f.open("rb") as fh:
                while chunk := fh.read(_CHUNK):
                    one.update(chunk)
            one.update(b"\0")
        digest = one.hexdigest()
        per_input[str(path)] = f"sha256:{digest}"
        overall.update(digest.encode())
    return f"sha256:{overall.hexdigest()}", per_input


def is_judge_item_jsonl(path: Path) -> bool:
    """True when ``path`` is a JSONL file whose first record looks like a JudgeItem."""
    path = Path(path)
    if not (path.is_file() and path.suffix == ".jsonl"):
        return False
    with reading_utf8(path), path.open("r", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    return False
                return isinstance(obj, dict) and "item_id" in obj and "candidate" in obj
    return False


def attunebench_items(data: Path, candidate: str) -> list[JudgeItem]:
    return list(attunebench_to_judge_items(load_attunebench(data), candidate=candidate))


def filter_models(items: list[JudgeItem], models: Sequence[str], where: str) -> list[JudgeItem]:
    present = {it.candidate_model for it in items}
    missing = [m for m in models if m not in present]
    if missing:
        raise UserError(
            f"{where}: no candidates for model(s) {', '.join(map(repr, missing))}",
            [f"models present: {', '.join(sorted(present)) or '(none)'}"],
        )
    wanted = set(models)
    return [it for it in items if it.candidate_model in wanted]


def inspect_log_input(data: Path, candidates: Path | None) -> Path | None:
    """The Inspect log (or folder of logs) a run reads its candidates from, if any.

    ``score --candidates LOG.eval`` (DATA omitted or the same log) and ``score LOG.eval``
    judge the log's own samples: each sample's input messages are the context, its output the
    candidate. An Inspect log beside other DATA is refused (the log carries its conversations).
    """
    log = candidates if candidates is not None and is_inspect_log(candidates) else None
    if log is None and candidates is None and is_inspect_log(data):
        log = data
    if log is None:
        return None
    if Path(data) != Path(log):
        raise UserError(
            f"{data}: an Inspect log carries its own conversations; give the log alone "
            f"(attune-judge score --candidates {log})"
        )
    return Path(log)


def load_judge_items(
    data: Path,
    *,
    candidates: Path | None = None,
    models: Sequence[str] | None = None,
) -> list[JudgeItem]:
    """The items to judge, in a stable order.

    Parameters
    ----------
    data
        AttuneBench data, a JudgeItem JSONL file, or an Inspect AI log (or folder of logs).
    candidates
        Optional candidates JSONL (``conversation_id, turn, model, response``); each candidate
        is judged in the context of its turn. Or an Inspect AI log (DATA being the same log):
        its samples are the candidates (:func:`attune_judge.data.adapters.inspect_judge_items`).
    models
        Keep only these candidate models. Without candidates and with AttuneBench data the
        default is the three pseudo-models.

    Raises
    ------
    UserError
        For unreadable data, a model with no candidates, or a pseudo-model asked of a
        JudgeItem file.
    """
    data = Path(data)
    log = inspect_log_input(data, candidates)
    if log is not None:
        items = inspect_judge_items(log)
        return filter_models(items, models, str(log)) if models else items
    judge_item_file = is_judge_item_jsonl(data)
    if candidates is not None:
        base = (
            read_jsonl(data, JudgeItem) if judge_item_file else attunebench_items(data, "original")
        )
        items = items_for_candidates(base, read_candidates(candidates), source=str(candidates))
        return filter_models(items, models, str(candidates)) if models else items
    if judge_item_file:
        items = read_jsonl(data, JudgeItem)
        return filter_models(items, models, str(data)) if models else items
    wanted = list(models) if models else list(PSEUDO_MODELS)
    unknown = [m for m in wanted if m not in PSEUDO_MODELS]
    if unknown:
        raise UserError(
            f"model(s) {', '.join(map(repr, unknown))} need a candidates file",
            [
                f"without --candidates only the pseudo-models {', '.join(PSEUDO_MODELS)} "
                "can be scored; draft replies with `attune-judge generate` first"
            ],
        )
    items = []
    for model in wanted:
        items.extend(attunebench_items(data, model))
    return items
