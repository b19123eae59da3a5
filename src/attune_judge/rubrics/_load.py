"""Find and load rubrics: built-in names or a user's YAML file; errors name file and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from attune_judge._resources import shipped_dir
from attune_judge.data import read_utf8
from attune_judge.errors import UserError
from attune_judge.rubrics._model import Rubric

__all__ = [
    "available_rubrics",
    "load_rubric",
    "parse_rubric",
    "read_yaml",
    "rubrics_dir",
    "validate_mapping",
    "yaml_location",
]

M = TypeVar("M", bound=BaseModel)


def rubrics_dir() -> Path:
    """The folder of built-in rubrics (inside the installed package, or the repository)."""
    return shipped_dir("rubrics")


def available_rubrics() -> list[str]:
    """Names of the built-in rubrics (file stems), sorted."""
    try:
        folder = rubrics_dir()
    except FileNotFoundError:
        return []
    return sorted(p.stem for p in folder.glob("*.yaml"))


def yaml_location(loc: tuple[Any, ...], data: Any, name_key: str = "id") -> str:
    """``criteria[2:tone].scale.min`` style path of a pydantic error location in ``data``.

    List indexes are labelled with the entry's ``name_key`` when it has one; a discriminator
    tag in the location (the value of the entry's ``kind``) is skipped.
    """
    parts: list[str] = []
    node = data
    for key in loc:
        if isinstance(key, int):
            label = f"[{key}]"
            if isinstance(node, list) and 0 <= key < len(node):
                node = node[key]
                if isinstance(node, dict) and isinstance(node.get(name_key), str):
                    label = f"[{key}:{node[name_key]}]"
            else:
                node = None
            parts.append(label)
        elif isinstance(node, dict) and key in node:
            node = node.get(key)
            parts.append(("." if parts else "") + str(key))
        else:  # a discriminator tag (``shuffle_criteria``) or a missing field
            if isinstance(node, dict) and node.get("kind") == key:
                continue
            node = None
            parts.append(("." if parts else "") + str(key))
    return "".join(parts) or "(top level)"


def validate_mapping(
    model: type[M], data: Any, source: str, what: str, *, name_key: str = "id"
) -> M:
    """Validate YAML/JSON ``data`` as ``model``.

    Raises
    ------
    UserError
        ``data`` is not a mapping, or fails validation: ``problems`` lists every error as
        ``source: field: message`` (``what`` names the kind of file, e.g. ``rubric``).
    """
    if not isinstance(data, dict):
        raise UserError(f"{source}: a {what} must be a mapping, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = yaml_location(tuple(err["loc"]), data, name_key)
            message = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                message = "unknown field (misspelt?)"
            problems.append(f"{source}: {where}: {message}")
        raise UserError(f"invalid {what} {source}", problems=problems) from None


def read_yaml(path: Path, what: str) -> Any:
    """Parsed contents of the YAML file ``path``; ``UserError`` when missing or invalid.

    ``what`` names the file in the not-found message (``rubric file``, ``variants file``).
    """
    import yaml

    if path.is_dir():
        raise UserError(f"{path}: is a folder; expected a {what} (.yaml)")
    if not path.is_file():
        raise UserError(f"{what} not found: {path}")
    try:
        return yaml.safe_load(read_utf8(path))
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {exc}") from None


def parse_rubric(data: Any, source: str) -> Rubric:
    """Validate rubric data; ``UserError`` lists every problem as ``source: field: message``."""
    return validate_mapping(Rubric, data, source, "rubric")


def load_rubric(name_or_path: str | Path) -> Rubric:
    """Load a built-in rubric by name (``attunebench-reference``) or a YAML file by path.

    Raises
    ------
    UserError
        Unknown name (lists the available ones), unreadable YAML, invalid fields.
    """
    text = str(name_or_path)
    path = Path(text).expanduser()
    looks_like_path = path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text
    if not looks_like_path:
        available = available_rubrics()
        if text not in available:
            raise UserError(
                f"unknown rubric {text!r}; available: {', '.join(available) or '(none)'}"
                " (or give the path of a .yaml file)"
            )
        path = rubrics_dir() / f"{text}.yaml"
    return parse_rubric(read_yaml(path, "rubric file"), str(path))
