"""Find and load rubrics: built-in names or a user's YAML file; errors name file and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from attune_judge.errors import UserError
from attune_judge.rubrics._model import Rubric

__all__ = ["available_rubrics", "load_rubric", "parse_rubric", "rubrics_dir"]


def rubrics_dir() -> Path:
    """The folder of built-in rubrics (inside the installed package, or the repository)."""
    from attune_judge._resources import shipped_dir

    return shipped_dir("rubrics")


def available_rubrics() -> list[str]:
    """Names of the built-in rubrics (file stems), sorted."""
    try:
        folder = rubrics_dir()
    except FileNotFoundError:
        return []
    return sorted(p.stem for p in folder.glob("*.yaml"))


def _location(loc: tuple[Any, ...], data: Any) -> str:
    """``criteria[2].scale.min`` style path; list indexes become the criterion id when known."""
    parts: list[str] = []
    node = data
    for key in loc:
        if isinstance(key, int):
            label = f"[{key}]"
            if isinstance(node, list) and 0 <= key < len(node):
                node = node[key]
                if isinstance(node, dict) and isinstance(node.get("id"), str):
                    label = f"[{key}:{node['id']}]"
            else:
                node = None
            parts.append(label)
        else:
            node = node.get(key) if isinstance(node, dict) else None
            parts.append(("." if parts else "") + str(key))
    return "".join(parts) or "(top level)"


def parse_rubric(data: Any, source: str) -> Rubric:
    """Validate rubric data; ``UserError`` lists every problem as ``source: field: message``."""
    if not isinstance(data, dict):
        raise UserError(f"{source}: a rubric must be a mapping, got {type(data).__name__}")
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = _location(tuple(err["loc"]), data)
            message = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                message = "unknown field (misspelt?)"
            problems.append(f"{source}: {where}: {message}")
        raise UserError(f"invalid rubric {source}", problems=problems) from None


def load_rubric(name_or_path: str | Path) -> Rubric:
    """Load a built-in rubric by name (``attunebench-reference``) or a YAML file by path.

    Raises
    ------
    UserError
        Unknown name (lists the available ones), unreadable YAML, invalid fields.
    """
    import yaml

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
    if not path.is_file():
        raise UserError(f"rubric file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML: {exc}") from None
    return parse_rubric(data, str(path))
