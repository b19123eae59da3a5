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
import re
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


_NAME = re.compile(r"[^\W_][\w.@+' -]{0,63}")
"""An annotator name: 1 to 64 characters, letters and digits of any script, ``. @ + ' -``,
``_`` and spaces inside (an e-mail address is one); no comma, no control character."""
_DIGITS = re.compile(r"[0-9]{1,6}")
"""A rating level as Label Studio writes a choice: ASCII digits (``"4"``), not ``"٤"``."""
_IMPORTED = "labelstudio_annotators"
"""``meta`` key: the annotator names earlier imports created (a re-import may use them)."""


def _annotator(ann: dict[str, Any], where: str) -> str:
    name = ann.get("created_username")
    by = ann.get("completed_by")
    if name is None and isinstance(by, dict):
        name = by.get("email") or by.get("username")
    if name is None and isinstance(by, int) and not isinstance(by, bool) and 0 <= by < 10**12:
        name = f"labelstudio-{by}"
    if name is None:
        raise UserError(f"{where}: field completed_by: missing (who annotated?)")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UserError(
            f"{where}: field completed_by: {_short(name)} is not an annotator name "
            "(1 to 64 letters, digits, . @ + ' - _ or spaces; one person per annotation)"
        )
    return name


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _answers(task: str, ann: dict[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    results = ann.get("result")
    if not isinstance(results, list):
        raise UserError(f"{where}: field result: expected a list of choices results")
    for r, res in enumerate(results):
        value = res.get("value") if isinstance(res, dict) else None
        choices = value.get("choices") if isinstance(value, dict) else None
        name = res.get("from_name") if isinstance(res, dict) else None
        if (
            not isinstance(name, str)
            or not isinstance(choices, list)
            or len(choices) != 1
            or not isinstance(choices[0], str)
        ):
            raise UserError(
                f"{where}: field result[{r}]: expected a choices result "
                '({"from_name": ..., "value": {"choices": ["<one choice>"]}})'
            )
        if name in out:
            raise UserError(f"{where}: field result[{r}]: {name!r} answered twice")
        out[name] = choices[0]
    if task == "pairwise":
        winner = out.get("choice")
        choice = {"A": "first", "B": "second", "tie": "tie"}.get(str(winner))
        if choice is None or set(out) != {"choice"}:
            raise UserError(f"{where}: field result.choice: expected A, B or tie, not {winner!r}")
        return {"choice": choice}
    if task == "ratings":
        for k, v in out.items():
            if not _DIGITS.fullmatch(v):
                raise UserError(
                    f"{where}: field result.{k}: {_short(v)} is not a level of the scale "
                    "(a whole number in ASCII digits)"
                )
        return {k: int(v) for k, v in out.items()}
    return out


def _read_tasks(path: Path) -> list[Any]:
    try:
        tasks = json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})") from None
    except RecursionError:
        raise UserError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise UserError(f"{path}: not valid JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(tasks, list):
        raise UserError(f"{path}: expected a JSON list of Label Studio tasks")
    return tasks


def import_labelstudio(path: Path, db: Path, *, as_name: str | None = None) -> dict[str, int]:
    """Store the annotations of a Label Studio JSON export in ``db`` (its items must be there:
    tasks name them by ``data.item_id``). Returns counts of stored and already-present labels.

    All or nothing: every task is checked first (values exact members of the scale, annotator
    names valid, ``was_cancelled`` a true boolean, one label per annotator and item), and the
    labels are stored in one transaction. An annotator name the database already has from
    elsewhere (a web annotator) is refused: ``as_name`` stores the file's labels under that
    name instead (a file of one annotator).

    Raises
    ------
    UserError
        One line naming the file, task, annotation and field.
    """
    tasks = _read_tasks(path)
    if as_name is not None and not _NAME.fullmatch(as_name):
        raise UserError(f"--as: {_short(as_name)} is not an annotator name")
    store = open_store(db)
    try:
        task, rubric = store_rubric(store)
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        people: set[str] = set()
        for t, entry in enumerate(tasks):
            where = f"{path}: task {t}"
            if not isinstance(entry, dict):
                raise UserError(f"{where}: expected a Label Studio task (a JSON object)")
            data = entry.get("data")
            item_id = data.get("item_id") if isinstance(data, dict) else None
            item = store.item(item_id) if isinstance(item_id, str) else None
            if item is None:
                raise UserError(f"{where}: field data.item_id: {_short(item_id)} is not in {db}")
            annotations = entry.get("annotations", [])
            if not isinstance(annotations, list):
                raise UserError(f"{where}: field annotations: expected a list")
            for a, ann in enumerate(annotations):
                here = f"{where} annotation {a}"
                if not isinstance(ann, dict):
                    raise UserError(f"{here}: expected an annotation (a JSON object)")
                cancelled = ann.get("was_cancelled", False)
                if not isinstance(cancelled, bool) and cancelled is not None:
                    raise UserError(
                        f"{here}: field was_cancelled: expected true or false, not "
                        f"{_short(cancelled)}"
                    )
                if cancelled:
                    continue
                name = _annotator(ann, here)
                people.add(name)
                if as_name is not None and len(people) > 1:
                    raise UserError(
                        f"{here}: --as {as_name}: a second annotator ({', '.join(sorted(people))})"
                        ": --as takes a file of one annotator"
                    )
                try:
                    answers = check_answers(task, rubric, item, _answers(task, ann, here), False)
                except BadAnswerError as exc:
                    raise UserError(f"{here}: {exc}") from None
                key = (as_name or name, item.item_id)
                if key in rows and rows[key] != answers:
                    raise UserError(
                        f"{here}: {key[0]!r} labels item {item.item_id!r} twice in this file, "
                        "differently"
                    )
                rows[key] = answers
        names = {as_name} if as_name is not None else people
        imported = set(json.loads(store.meta().get(_IMPORTED, "[]")))
        taken = sorted((names & set(store.annotators())) - imported)
        if taken and as_name is None:
            raise UserError(
                f"{path}: annotator {taken[0]!r} already labels in {db} (not from an import); "
                "store this file's labels under another name with --as NAME"
            )
        stored, present = store.import_labels(
            [(who, item_id, answers) for (who, item_id), answers in rows.items()],
            meta={_IMPORTED: json.dumps(sorted(imported | names))},
        )
    finally:
        store.close()
    return {"stored": stored, "present": present}
