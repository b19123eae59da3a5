"""What annotators label: the items (as ``score`` reads them), the task, and the blind view.

``ITEMS`` is anything ``attune-judge score`` reads (AttuneBench data, a JudgeItem JSONL), or a
run directory (the items its manifest names). The view an annotator gets holds the
conversation, the reply (or the two replies, in the order drawn for that annotator) and the
rubric's criteria with their anchors: never the candidate model, the option names, a judge
score or another annotator's answer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from attune_judge.data import JudgeItem
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric
from attune_judge.runs import read_manifest

__all__ = ["TASKS", "Task", "blind_view", "check_task", "load_items", "swapped"]

Task = Literal["ratings", "pairwise", "behaviours"]
TASKS: tuple[Task, ...] = ("ratings", "pairwise", "behaviours")
_RUBRIC_KIND = {"ratings": ("reference",), "pairwise": ("pairwise",), "behaviours": ("behaviour",)}


def check_task(task: str, rubric: Rubric) -> Task:
    """The task, checked against the rubric's kind (a pairwise task needs a pairwise rubric)."""
    if task not in TASKS:
        raise UserError(f"--task must be ratings, pairwise or behaviours, not {task!r}")
    if rubric.kind not in _RUBRIC_KIND[task]:
        raise UserError(
            f"--task {task} needs a {' or '.join(_RUBRIC_KIND[task])} rubric; "
            f"rubric {rubric.id!r} is a {rubric.kind} rubric"
        )
    if task == "ratings" and any(c.scale is None for c in rubric.criteria):
        raise UserError(f"rubric {rubric.id!r}: every criterion needs a scale to be rated")
    return task


def _run_arguments(run: Path) -> dict[str, Any]:
    manifest = read_manifest(run)
    if manifest is None:
        raise UserError(f"{run}: a run directory must contain manifest.json")
    if "data" not in manifest.arguments:
        raise UserError(f"{run}/manifest.json: field arguments.data: missing (not a scoring run)")
    return manifest.arguments


def load_items(items: Path, rubric: str | None) -> tuple[list[JudgeItem], str]:
    """The items ``score`` would judge for ``rubric`` (and the rubric name used).

    A run directory gives its data, candidates, models and (without ``rubric``) its rubric.
    """
    from attune_judge.runner import ScoreConfig
    from attune_judge.runner._score import score_items

    items = Path(items)
    if not items.exists():
        raise UserError(f"{items}: no such file or folder")
    if items.is_dir() and (items / "manifest.json").exists():
        args = _run_arguments(items)
        name = rubric or str(args.get("rubric") or "")
        cfg = ScoreConfig(
            data=Path(args["data"]),
            out=items,
            rubric=name,
            candidates=args.get("candidates"),
            models=args.get("models"),
        )
    else:
        if rubric is None:
            raise UserError("--rubric is required unless ITEMS is a run directory")
        cfg = ScoreConfig(data=items, out=items, rubric=rubric)
        name = rubric
    found = score_items(cfg)
    if not found:
        raise UserError(f"{items}: no items to label")
    return found, name


def swapped(seed: str, annotator: str, item_id: str) -> bool:
    """Whether ``annotator`` sees a pair's reply B first (a fixed draw per annotator and item)."""
    digest = hashlib.sha256(f"{seed}\0{annotator}\0{item_id}".encode()).digest()
    return bool(digest[0] & 1)


def _criteria(rubric: Rubric, only: list[str] | None = None) -> list[dict[str, Any]]:
    out = []
    for c in rubric.criteria:
        if only is not None and c.id not in only:
            continue
        scale = [c.scale.min, c.scale.max] if c.scale else None
        anchors = [[int(k), v] for k, v in sorted(c.anchors.items())]
        out.append(
            {
                "id": c.id,
                "name": c.name,
                "description": c.description,
                "scale": scale,
                "anchors": anchors,
            }
        )
    return out


def blind_view(item: JudgeItem, key: str, task: Task, rubric: Rubric, flip: bool) -> dict[str, Any]:
    """What the page shows of ``item`` (named by its opaque ``key``, since item ids may name
    the model): no model, option name, score or other answer."""
    view: dict[str, Any] = {
        "key": key,
        "task": task,
        "instructions": rubric.description,
        "context": [{"role": m.role, "content": m.content} for m in item.context],
    }
    if task == "pairwise":
        other = item.metadata.get("other")
        if not isinstance(other, str):
            raise UserError(f"item {item.item_id!r}: field metadata.other: missing (not a pair)")
        replies = [item.candidate, other]
        view["replies"] = replies[::-1] if flip else replies
        question = str(item.metadata.get("question") or "general")
        named = [c for c in rubric.criteria if c.id == question]
        view["question"] = named[0].description if named else rubric.criteria[0].description
        return view
    view["reply"] = item.candidate
    if task == "ratings" and item.reference is not None:
        view["reference"] = item.reference  # a reference rubric rates the reply against it
    if task == "behaviours":
        asked = item.metadata.get("behaviour_items")
        view["criteria"] = _criteria(rubric, [str(i) for i in asked] if asked else None)
    else:
        view["criteria"] = _criteria(rubric)
    return view
