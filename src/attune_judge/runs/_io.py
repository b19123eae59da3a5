"""The one writer and the one reader of a run directory's records.

Every command writes ``summary.json`` through :func:`write_summary` (validated against its
kind's model, ``schema_version`` stamped, secrets redacted, written atomically) and every
reader loads it through :func:`read_summary` into the typed model. ``manifest.json`` is
written by :func:`write_manifest` and read by :func:`read_manifest`.

Older layouts: a summary without ``schema_version`` was written before versioning and is
read as version 1; :data:`MIGRATIONS` upgrades an older version step by step (1 → 2: the
sensitivity settings' ``bootstrap_replicates`` is ``B``). A summary of a newer version than
:data:`SCHEMA_VERSION` is refused with one line naming both versions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from attune_judge._schema_version import SCHEMA_VERSION
from attune_judge.calibration import ResultModel
from attune_judge.errors import UserError
from attune_judge.runs._files import write_json
from attune_judge.runs._manifest import CommandManifest, RunManifest
from attune_judge.runs._records import RunSummary, parse_summary

__all__ = [
    "MANIFEST_FILE",
    "MIGRATIONS",
    "SUMMARY_FILE",
    "read_manifest",
    "read_summary",
    "record_json",
    "summary_json",
    "write_manifest",
    "write_summary",
]

SUMMARY_FILE = "summary.json"
"""The summary's file name inside a run directory."""
MANIFEST_FILE = "manifest.json"
"""The manifest's file name inside a run directory."""


def _b_named_once(data: dict[str, Any]) -> dict[str, Any]:
    """1 → 2: the sensitivity settings (of a ``sensitivity`` or ``demo`` summary) name the
    bootstrap count ``B``, as every other block does, not ``bootstrap_replicates``."""
    block = data.get("sensitivity")
    settings = block.get("settings") if isinstance(block, dict) else None
    if isinstance(block, dict) and isinstance(settings, dict):
        renamed = {("B" if k == "bootstrap_replicates" else k): v for k, v in settings.items()}
        data = {**data, "sensitivity": {**block, "settings": renamed}}
    return {**data, "schema_version": 2}


MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _b_named_once}
"""``version → upgrade`` of a summary of that version to the next one (applied in turn up to
:data:`SCHEMA_VERSION`)."""


def _mark_changed(value: Any) -> None:
    """Count as set every field a writer changed in place (a default list or dict it filled),
    in ``value`` and below, so ``exclude_unset`` keeps them; a statistics layer's result
    (a ``ResultModel`` not declared here) is written whole."""
    if isinstance(value, BaseModel):
        whole = isinstance(value, ResultModel) and not type(value).__module__.startswith(
            __package__ or ""
        )
        for name, field in type(value).model_fields.items():
            item = getattr(value, name)
            if whole or item != field.get_default(call_default_factory=True):
                value.model_fields_set.add(name)
            _mark_changed(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _mark_changed(item)
    elif isinstance(value, dict):
        for item in value.values():
            _mark_changed(item)


def record_json(record: BaseModel) -> dict[str, Any]:
    """The JSON object of a record or block: the fields its writer set or filled in."""
    _mark_changed(record)
    return record.model_dump(mode="json", exclude_unset=True)


def summary_json(summary: RunSummary) -> dict[str, Any]:
    """The JSON object of a typed summary, as :func:`write_summary` writes it (the fields a
    writer set or filled; ``schema_version`` and ``kind`` always): ``read_summary`` then
    ``summary_json`` gives back the file's object."""
    data = record_json(summary)
    return {"schema_version": summary.schema_version, "kind": summary.kind, **data}


def write_summary(run_dir: Path | str, summary: RunSummary) -> RunSummary:
    """Write ``<run_dir>/summary.json``: the typed summary of its kind (a model, never a
    dict), stamped with :data:`SCHEMA_VERSION`, redacted, atomically. Returns it."""
    if not isinstance(summary, RunSummary):
        raise TypeError(f"write_summary takes a runs.RunSummary model, not {type(summary)}")
    summary.schema_version = SCHEMA_VERSION
    write_json(Path(run_dir) / SUMMARY_FILE, summary_json(summary))
    return summary


def write_manifest(run_dir: Path | str, manifest: RunManifest | CommandManifest) -> None:
    """Write ``<run_dir>/manifest.json`` (a :class:`RunManifest` or :class:`CommandManifest`)."""
    write_json(Path(run_dir) / MANIFEST_FILE, manifest.model_dump(mode="json"))


def _field(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"field {loc}: {err['msg']}"


def _read_object(run_dir: Path | str, name: str) -> tuple[Path, dict[str, Any] | None]:
    """``<run_dir>/<name>`` (or ``run_dir`` itself, that file) as a JSON object; ``None``
    when the file does not exist."""
    path = Path(run_dir)
    if path.is_dir() or path.name != name:
        path = path / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return path, None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: cannot read it as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a JSON object at the top level")
    return path, data


def read_manifest(run_dir: Path | str) -> RunManifest | CommandManifest | None:
    """The typed manifest of a run directory (``None`` when it has no ``manifest.json``): a
    run of the runner (its manifest names judges) as :class:`RunManifest`, any other
    command's as :class:`CommandManifest`. ``run_dir`` may also be the file itself.

    Raises
    ------
    UserError
        One line naming the file: not JSON, not an object, or a field that does not have the
        manifest's layout.
    """
    path, data = _read_object(run_dir, MANIFEST_FILE)
    if data is None:
        return None
    model = RunManifest if "judges" in data else CommandManifest
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{path}: not a run manifest ({_field(exc)})") from None


def read_summary(run_dir: Path | str) -> RunSummary | None:
    """The typed summary of a run directory (``None`` when it has no ``summary.json``).

    ``run_dir`` may also be the ``summary.json`` file itself.

    Raises
    ------
    UserError
        One line naming the file: not JSON, not an object, a newer ``schema_version`` than
        this attune-judge reads, or a field that does not have its kind's layout.
    """
    path, data = _read_object(run_dir, SUMMARY_FILE)
    if data is None:
        return None
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UserError(f"{path}: schema_version {version!r} is not a layout version")
    if version > SCHEMA_VERSION:
        raise UserError(
            f"{path}: schema_version {version} is newer than this attune-judge reads "
            f"({SCHEMA_VERSION}); upgrade attune-judge to read it"
        )
    for v in range(version, SCHEMA_VERSION):
        data = MIGRATIONS[v](data)
    try:
        return parse_summary(data)
    except ValidationError as exc:
        raise UserError(
            f"{path}: not a {data.get('kind', 'score')} summary of schema_version "
            f"{version} ({_field(exc)})"
        ) from None
    except ValueError as exc:  # an unknown kind
        raise UserError(f"{path}: {exc}") from None
