"""Reading and writing AttuneBench conversations: a folder, one file, or JSON Lines.

Every problem of every file is collected and reported together, one line each, as
``file: json.path: message`` (``file:line: json.path: message`` for JSON Lines); nothing is
returned unless everything loaded.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from attune_judge.data._attunebench import Conversation
from attune_judge.data._attunebench_fields import ERROR_TYPE, unknown_keys
from attune_judge.data._text import not_utf8_error
from attune_judge.errors import UserError

__all__ = ["attunebench_problems", "load_attunebench", "write_attunebench_jsonl"]


def _json_path(loc: Iterable[int | str]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


def attunebench_problems(exc: ValidationError, where: str) -> list[str]:
    """One ``where: json.path: message`` line per error of a conversation's validation."""
    lines = []
    for err in exc.errors():
        path = _json_path(err["loc"])
        ctx = err.get("ctx") or {}
        if err["type"] == ERROR_TYPE:
            path += str(ctx.get("subpath", ""))
        msg = err["msg"]
        if err["type"] not in (ERROR_TYPE, "missing", "extra_forbidden") and "input" in err:
            shown = repr(err["input"])
            msg += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
        lines.append(f"{where}: {path}: {msg}")
    return lines


def _natural_key(path: Path) -> list[Any]:
    """Sort ``conversation_5`` before ``conversation_12``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


_log = logging.getLogger("attune_judge.data")
_UNKNOWN_SHOWN = 10
"""How many unknown keys a load names one by one (the rest are counted)."""


def _validate(
    obj: object, where: str, out: list[Conversation], problems: list[str], unknown: list[str]
) -> None:
    try:
        conv = Conversation.model_validate(obj)
    except ValidationError as exc:
        problems.extend(attunebench_problems(exc, where))
        return
    out.append(conv)
    unknown.extend(f"{where}: {key}" for key in unknown_keys(conv))


def _report_unknown(unknown: list[str]) -> None:
    if not unknown:
        return
    _log.warning(
        "%d key(s) that the AttuneBench format does not define were kept but not used "
        "(a misspelt key is read as absent):",
        len(unknown),
    )
    for line in unknown[:_UNKNOWN_SHOWN]:
        _log.warning("  %s", line)
    if len(unknown) > _UNKNOWN_SHOWN:
        _log.warning("  ... and %d more", len(unknown) - _UNKNOWN_SHOWN)


def _read_text(path: Path, problems: list[str]) -> str | None:
    """The text of ``path``, or ``None`` with the problem noted (not UTF-8, unreadable)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        problems.append(str(not_utf8_error(path)))
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc}")
    return None


def _read_json_file(
    path: Path, out: list[Conversation], problems: list[str], unknown: list[str]
) -> None:
    text = _read_text(path, problems)
    if text is None:
        return
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}")
        return
    if isinstance(obj, list):
        for i, item in enumerate(obj):
            _validate(item, f"{path}: [{i}]", out, problems, unknown)
    else:
        _validate(obj, str(path), out, problems, unknown)


def _read_jsonl_file(
    path: Path, out: list[Conversation], problems: list[str], unknown: list[str]
) -> None:
    text = _read_text(path, problems)
    for i, line in enumerate([] if text is None else text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{i}: column {exc.colno}: not valid JSON: {exc.msg}")
            continue
        _validate(obj, f"{path}:{i}", out, problems, unknown)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted((p for p in path.glob("*.json") if p.is_file()), key=_natural_key)
        files += sorted((p for p in path.glob("*.jsonl") if p.is_file()), key=_natural_key)
        if not files:
            subfolders = sorted(
                p.name for p in path.iterdir() if p.is_dir() and any(p.glob("*.json"))
            )
            hint = f" (subfolders with .json files: {', '.join(subfolders)})" if subfolders else ""
            raise UserError(
                f"{path}: no conversation files (*.json or *.jsonl) in this folder; "
                f"point at the folder holding conversation_N.json{hint}"
            )
        return files
    if path.is_file():
        return [path]
    raise UserError(f"{path}: no such file or folder")


def load_attunebench(path: str | Path) -> list[Conversation]:
    """Load AttuneBench conversations from a folder, a ``.json`` file or a ``.jsonl`` file.

    Parameters
    ----------
    path
        A folder of ``conversation_N.json`` files (every ``*.json`` and ``*.jsonl`` in it is
        read, in natural name order), one ``.json`` file holding a conversation (or a list of
        them), or a ``.jsonl`` file with one conversation per line.

    Returns
    -------
    list[Conversation]
        The conversations in file order.

    Raises
    ------
    UserError
        When the path is missing or holds no conversation file, or when any file has any
        problem: malformed JSON (file, line and column), a field of the wrong type or out of
        range, a pairwise label that resolves to no response, duplicate turn numbers, or a
        conversation id used twice. Keys the format does not define are not a problem: they
        are kept and logged as a warning on ``attune_judge.data``. Every problem of every file
        is listed in ``problems`` as ``file: json.path: message``; no conversation is returned
        in that case.
    """
    path = Path(path)
    files = _files(path)
    conversations: list[Conversation] = []
    problems: list[str] = []
    unknown: list[str] = []
    first_seen: dict[str, Path] = {}
    bad_files = 0
    for file in files:
        before, problems_before = len(conversations), len(problems)
        if file.suffix.lower() == ".jsonl":
            _read_jsonl_file(file, conversations, problems, unknown)
        else:
            _read_json_file(file, conversations, problems, unknown)
        for conv in conversations[before:]:
            cid = conv.conversation_id
            if cid in first_seen:
                problems.append(
                    f"{file}: $.conversationId: conversation id {cid!r} is also used in "
                    f"{first_seen[cid]}"
                )
            else:
                first_seen[cid] = file
        bad_files += len(problems) > problems_before
    if problems:
        raise UserError(
            f"{path}: {len(problems)} problem(s) in {bad_files} of {len(files)} file(s); "
            "nothing was loaded",
            problems,
        )
    if not conversations:
        names = ", ".join(str(f) for f in files[:3]) + (", ..." if len(files) > 3 else "")
        raise UserError(f"{path}: no conversations in {names} (empty file?)")
    _report_unknown(unknown)
    return conversations


def write_attunebench_jsonl(path: str | Path, conversations: Iterable[Conversation]) -> int:
    """Write conversations as JSON Lines in the official format (atomically); returns how many.

    :func:`load_attunebench` reads the file back into equal conversations.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for conv in conversations:
            fh.write(json.dumps(conv.to_official_json(), ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(path)
    return n
