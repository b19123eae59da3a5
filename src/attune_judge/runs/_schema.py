"""JSON Schemas of the run records, as shipped in ``runs/schemas/`` and printed by
``attune-judge schema KIND``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from attune_judge.errors import UserError
from attune_judge.runs._manifest import CommandManifest, RunManifest
from attune_judge.runs._records import SUMMARY_MODELS

__all__ = ["SCHEMA_DIR", "json_schema", "schema_kinds", "write_schemas"]

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
"""The shipped schema files, ``<kind>.schema.json`` (kept equal to the models by a test)."""


def _models() -> dict[str, Any]:
    return {"manifest": RunManifest | CommandManifest, **SUMMARY_MODELS}


def schema_kinds() -> list[str]:
    """The names ``json_schema`` knows: ``manifest`` and every summary kind."""
    return list(_models())


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``manifest.json`` (``kind="manifest"``) or of a kind's summary.

    Raises
    ------
    UserError
        For an unknown kind (the known ones are named).
    """
    models = _models()
    if kind not in models:
        raise UserError(f"unknown schema {kind!r}; known: {', '.join(models)}")
    schema = TypeAdapter(models[kind]).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"attune-judge/{kind}.schema.json"
    return schema


def write_schemas(folder: Path = SCHEMA_DIR) -> list[Path]:
    """Write every schema to ``folder`` (how the shipped files are made)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind in schema_kinds():
        path = folder / f"{kind}.schema.json"
        path.write_text(json.dumps(json_schema(kind), indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
