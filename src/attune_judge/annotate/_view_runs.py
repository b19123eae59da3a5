"""What ``attune-judge view RUN`` shows: every judgments log under ``RUN``, its items and the
people's labels joined to it.

``RUN`` is any run directory: a scoring run (``score``, a jury, ``bench``, ``sensitivity``:
``RUN/judgments.jsonl``), a ``validate -o`` folder (the judgments in ``RUN/run``, the people
from the shipped set it was validated on), an ``align`` folder or the demo's folder (its logs
one or two levels down). ``--human`` adds people's labels (Rating or Preference JSONL: an
``annotate export``, ``calibrate``'s human file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from attune_judge.annotate._view_index import (
    HumanLabel,
    JudgmentIndex,
    RawItem,
    humans_from_records,
    raw_items,
)
from attune_judge.data import JudgeItem, Preference, Rating, read_jsonl
from attune_judge.errors import UserError

__all__ = ["ViewedRun", "find_runs", "open_runs"]

_DEPTH = 3
"""How far below ``RUN`` judgments logs are looked for."""


@dataclass
class ViewedRun:
    """One judgments log with its index."""

    name: str
    """Its folder relative to ``RUN`` (``.`` for ``RUN`` itself)."""
    folder: Path
    index: JudgmentIndex
    kind: str
    """The summary's kind beside it (``score``, ``validate``, ...; ``run`` when unknown)."""
    humans_source: str | None
    """Where the people's labels came from (``None``: none joined)."""
    items_note: str | None
    """Why the items (conversations, replies) are missing, when they are."""


def find_runs(root: Path) -> list[Path]:
    """The ``judgments.jsonl`` files under ``root`` (itself first, then by path)."""
    root = Path(root)
    if root.is_file() and root.name.endswith(".jsonl"):
        return [root]
    if not root.is_dir():
        raise UserError(f"{root}: no such run directory")
    found: list[Path] = []
    level = [root]
    for _ in range(_DEPTH):
        nxt: list[Path] = []
        for folder in level:
            log = folder / "judgments.jsonl"
            if log.is_file():
                found.append(log)
            nxt += sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        level = nxt
    if not found:
        raise UserError(
            f"{root}: no judgments.jsonl here or up to {_DEPTH - 1} folders down "
            "(view shows the judgments of score, bench, sensitivity, validate, align runs)"
        )
    return found


def _kind(folder: Path) -> tuple[str, str | None]:
    """The summary's kind of ``folder`` (or of its parent, a validate folder's ``run``) and
    the validation set when it is a ``validate`` run."""
    from attune_judge.runs import ValidateSummary, read_summary

    kinds = []
    for where in (folder.parent, folder):
        try:
            kinds.append(read_summary(where))
        except UserError:
            kinds.append(None)
    outer, own = kinds
    if isinstance(outer, ValidateSummary) and folder.name == "run":
        return "validate", outer.validation.set_name
    if isinstance(own, ValidateSummary):
        return "validate", own.validation.set_name
    return (own.kind if own is not None else "run"), None


Loader = Callable[[], Iterable[JudgeItem | RawItem]]


def _load_items(folder: Path) -> tuple[Loader | None, Path | None, str | None]:
    """A loader of the run's items, the file it reads, or why there are none."""
    from attune_judge.annotate._items import load_items
    from attune_judge.runs import read_manifest

    for beside in (folder / "items.jsonl", folder.parent / "items.jsonl"):
        if beside.is_file():
            return (lambda p=beside: raw_items(p)), beside, None
    try:
        manifest = read_manifest(folder)
    except UserError as exc:
        return None, None, str(exc)
    data = manifest.arguments.get("data") if manifest is not None else None
    if not data:
        return None, None, "the run's manifest names no items (arguments.data)"
    path = Path(str(data))
    if not path.exists():
        return None, None, f"its items {data} are not there (moved, or relative to another folder)"

    from attune_judge.runner import load_judge_items
    from attune_judge.runner._inputs import is_judge_item_jsonl

    if is_judge_item_jsonl(path):
        return (lambda: raw_items(path)), path, None
    args = manifest.arguments if manifest is not None else {}

    def load() -> list[JudgeItem]:
        try:  # as score read them (a pairwise rubric's pairs)
            return load_items(folder, None)[0]
        except UserError:  # a run that names no rubric (sensitivity: the variants' own)
            cands = args.get("candidates")
            return load_judge_items(
                path, candidates=Path(cands) if cands else None, models=args.get("models")
            )

    return load, path, None


def _set_humans(set_name: str) -> list[HumanLabel]:
    from attune_judge.validate import VALIDATION_SETS, load_calibration_set

    spec = VALIDATION_SETS[set_name]
    return humans_from_records(r for r in load_calibration_set(spec.calibration) if spec.humans(r))


def read_human_file(path: Path) -> list[HumanLabel]:
    """People's labels from a Rating or Preference JSONL file."""
    from attune_judge.validate import record_kind

    kind = record_kind(path)
    if kind not in ("rating", "preference"):
        raise UserError(f"{path}: --human needs Rating or Preference records, found {kind}")
    model = Preference if kind == "preference" else Rating
    return humans_from_records(read_jsonl(path, model))


def open_runs(root: Path, human: Path | None = None) -> list[ViewedRun]:
    """Every judgments log under ``root``, indexed (built or rebuilt as needed)."""
    root = Path(root)
    if human is not None and not Path(human).is_file():
        raise UserError(f"{human}: no such file (--human)")
    out: list[ViewedRun] = []
    for log in find_runs(root):
        folder = log.parent
        kind, set_name = _kind(folder)
        loader, items_path, note = _load_items(folder)
        source: str | None = None
        humans: Callable[[], list[HumanLabel]] | None = None
        if human is not None:
            source, humans = str(human), (lambda: read_human_file(Path(human)))
        elif set_name is not None:
            source = f"the people of the shipped set {set_name}"
            humans = lambda s=set_name: _set_humans(s)  # noqa: E731
        failed: list[str] = []

        def items(
            load: Loader | None = loader, failed: list[str] = failed
        ) -> list[JudgeItem | RawItem]:
            try:
                return list(load()) if load is not None else []
            except UserError as exc:  # the judgments are still worth showing
                failed.append(str(exc))
                return []

        index = JudgmentIndex.open(
            log,
            key_files=[items_path, human, Path(source or "-") if set_name else None],
            items=items,
            humans=humans,
        )
        if humans is not None and not index.has_humans:
            source = None
        rel = folder.relative_to(root) if root.is_dir() and folder != root else Path(".")
        if loader is not None and not index.has_items:
            note = failed[0] if failed else "no items could be read for this run"
        name = rel.as_posix() if rel != Path(".") else (folder.resolve().name or str(folder))
        out.append(ViewedRun(name, folder, index, kind, source, note))
    # runs with people's labels first: where the judge's disagreements are
    return sorted(out, key=lambda r: r.humans_source is None)
