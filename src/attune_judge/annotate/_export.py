"""``annotate export`` / ``annotate import``: the labels as the toolkit's records, and
Label Studio's JSON task format both ways.

The JSONL export holds ``Rating`` records (ratings, behaviours) or ``Preference`` records
(pairs), which ``calibrate --human``, ``rank --human`` and ``align`` read as they are. The Label
Studio export is a list of tasks (``data`` = the item's text, ``annotations`` = one per
annotator with one ``choices`` result per criterion); ``label_config`` gives the project's
labelling interface. Importing such a file stores its annotations in a labels database.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attune_judge.annotate._answers import BadAnswerError, check_answers, to_records
from attune_judge.annotate._store import LabelStore
from attune_judge.data import JudgeItem, Preference, Rating, read_utf8, write_jsonl
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric

__all__ = [
    "export_labels",
    "export_records",
    "import_labelstudio",
    "label_config",
    "open_store",
    "store_rubric",
]


def open_store(db: Path, *, must_exist: bool = True) -> LabelStore:
    """The labels database at ``db`` (one clear error when it is missing)."""
    if must_exist and not Path(db).is_file():
        raise UserError(f"{db}: no such labels database (made by `attune-judge annotate`)")
    return LabelStore(db)


def store_rubric(store: LabelStore) -> tuple[str, Rubric]:
    """The task and rubric a labels database was made for."""
    meta = store.meta()
    if "task" not in meta:
        raise UserError(f"{store.path}: an empty labels database (no task recorded)")
    return meta["task"], Rubric.model_validate(json.loads(meta["rubric"]))


def export_records(store: LabelStore, task: str, rubric: Rubric) -> list[Rating] | list[Preference]:
    items = {i.item_id: i for i in store.items()}
    return to_records(task, rubric, items, store.labels("label"))


def _text(item: JudgeItem) -> str:
    return "\n\n".join(f"{m.role}: {m.content}" for m in item.context)


def label_config(task: str, rubric: Rubric) -> str:
    """A Label Studio labelling interface (XML) matching :func:`export_labels`' tasks."""

    def esc(s: str) -> str:
        return (
            s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        )

    parts = ["<View>", '  <Text name="context" value="$context"/>']
    if task == "pairwise":
        parts += [
            '  <Text name="reply_a" value="$reply_a"/>',
            '  <Text name="reply_b" value="$reply_b"/>',
            '  <Choices name="choice" toName="reply_a" choice="single" required="true">',
            '    <Choice value="A"/><Choice value="B"/><Choice value="tie"/>',
            "  </Choices>",
        ]
    else:
        parts.append('  <Text name="reply" value="$reply"/>')
        for c in rubric.criteria:
            levels = (
                ["yes", "no"]
                if task == "behaviours"
                else [str(v) for v in (c.scale.levels if c.scale else [])]
            )
            parts.append(f'  <Header value="{esc(c.name)}: {esc(c.description)}"/>')
            parts.append(f'  <Choices name="{c.id}" toName="reply" choice="single">')
            parts += [f'    <Choice value="{v}"/>' for v in levels]
            parts.append("  </Choices>")
    return "\n".join([*parts, "</View>", ""])


def _ls_task(n: int, item: JudgeItem, task: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "item_id": item.item_id,
        "conversation_id": item.conversation_id,
        "context": _text(item),
    }
    if task == "pairwise":
        data.update(reply_a=item.candidate, reply_b=item.metadata.get("other", ""))
    else:
        data["reply"] = item.candidate
    annotations = []
    for row in rows:
        if task == "pairwise":
            results = [("choice", row["answers"]["winner"])]
        else:
            results = [(k, str(v)) for k, v in sorted(row["answers"].items())]
        annotations.append(
            {
                "completed_by": {"email": row["annotator"]},
                "created_username": row["annotator"],
                "created_at": row["created"],
                "was_cancelled": False,
                "result": [
                    {
                        "from_name": name,
                        "to_name": "reply_a" if task == "pairwise" else "reply",
                        "type": "choices",
                        "value": {"choices": [value]},
                    }
                    for name, value in results
                ],
            }
        )
    return {"id": n, "data": data, "annotations": annotations}


def export_labels(db: Path, out: Path, fmt: str = "jsonl") -> dict[str, int]:
    """Write the labels of ``db`` to ``out`` as ``jsonl`` records or ``labelstudio`` tasks
    (with the interface beside it, ``<out>.xml``). Returns counts for the message."""
    store = open_store(db)
    try:
        task, rubric = store_rubric(store)
        if fmt == "jsonl":
            records = export_records(store, task, rubric)
            write_jsonl(out, records)
            n = len(records)
        elif fmt == "labelstudio":
            rows = store.labels("label")
            tasks = [
                _ls_task(n, item, task, [r for r in rows if r["item_id"] == item.item_id])
                for n, item in enumerate(store.items(), 1)
            ]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(tasks, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            out.with_suffix(".xml").write_text(label_config(task, rubric), encoding="utf-8")
            n = sum(len(t["annotations"]) for t in tasks)
        else:
            raise UserError(f"--format must be jsonl or labelstudio, not {fmt!r}")
        progress = store.progress()
        flags = len(store.labels("flag"))
    finally:
        store.close()
    return {"records": n, "labels": progress["labels"], "flags": flags}


def _annotator(ann: dict[str, Any], where: str) -> str:
    name = ann.get("created_username")
    by = ann.get("completed_by")
    if not name and isinstance(by, dict):
        name = by.get("email") or by.get("username")
    if not name and isinstance(by, int | str):
        name = f"labelstudio-{by}"
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"{where}: field completed_by: missing (who annotated?)")
    return name.split(",")[0].strip()


def _answers(task: str, ann: dict[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r, res in enumerate(ann.get("result") or []):
        try:
            name, value = res["from_name"], res["value"]["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise UserError(f"{where}: field result[{r}]: expected a choices result") from None
        out[name] = value
    if task == "pairwise":
        winner = out.get("choice")
        choice = {"A": "first", "B": "second", "tie": "tie"}.get(str(winner))
        if choice is None:
            raise UserError(f"{where}: field result.choice: expected A, B or tie, not {winner!r}")
        return {"choice": choice}
    if task == "ratings":
        try:
            return {k: int(v) for k, v in out.items()}
        except ValueError:
            raise UserError(f"{where}: field result: rating levels must be whole numbers") from None
    return out


def import_labelstudio(path: Path, db: Path) -> dict[str, int]:
    """Store the annotations of a Label Studio JSON export in ``db`` (its items must be there:
    tasks name them by ``data.item_id``). Returns counts of stored and already-present labels."""
    try:
        tasks = json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(tasks, list):
        raise UserError(f"{path}: expected a JSON list of Label Studio tasks")
    store = open_store(db)
    stored = present = 0
    try:
        task, rubric = store_rubric(store)
        for t, entry in enumerate(tasks):
            where = f"{path}: task {t}"
            item_id = (entry.get("data") or {}).get("item_id") if isinstance(entry, dict) else None
            item = store.item(item_id) if isinstance(item_id, str) else None
            if item is None:
                raise UserError(f"{where}: field data.item_id: {item_id!r} is not in {db}")
            for a, ann in enumerate(entry.get("annotations") or []):
                if ann.get("was_cancelled"):
                    continue
                here = f"{where} annotation {a}"
                name = _annotator(ann, here)
                try:
                    answers = check_answers(task, rubric, item, _answers(task, ann, here), False)
                except BadAnswerError as exc:
                    raise UserError(f"{here}: {exc}") from None
                store.add_annotator(name)
                if store.record(name, item.item_id, "label", answers):
                    stored += 1
                else:
                    present += 1
    finally:
        store.close()
    return {"stored": stored, "present": present}
