"""Planning: the (item, judge) tasks of a run, each with a stable key.

A task is generic: the item is any :class:`~attune_judge.data.JudgeItem` and the judge anything
that satisfies the :class:`~attune_judge.judges.Judge` protocol (a DSPy judge program, a
baseline, a jury, another helper's task scorer). The key ``(item_id, judge_id)`` is what resume
compares against the judgments already on disk.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from attune_judge.data import JudgeItem
from attune_judge.errors import UserError
from attune_judge.judges import Judge

__all__ = ["Task", "TaskKey", "pending_tasks", "plan_tasks"]

TaskKey = tuple[str, str]
"""``(item_id, judge_id)``."""


@dataclass(frozen=True)
class Task:
    """One item to be judged by one judge."""

    item: JudgeItem
    """What to judge."""
    judge: Judge
    """Who judges it."""

    @property
    def key(self) -> TaskKey:
        """``(item_id, judge_id)``: the identity resume uses."""
        return (self.item.item_id, self.judge.judge_id)


def plan_tasks(items: Sequence[JudgeItem], judges: Sequence[Judge]) -> list[Task]:
    """Every item for every judge, judge-major, in the items' order.

    Raises
    ------
    UserError
        When two items share an ``item_id`` or two judges a ``judge_id`` (resume could not
        tell their judgments apart).
    """
    problems: list[str] = []
    seen_items: set[str] = set()
    for item in items:
        if item.item_id in seen_items:
            problems.append(f"item_id {item.item_id!r} appears more than once")
        seen_items.add(item.item_id)
    seen_judges: set[str] = set()
    for judge in judges:
        if judge.judge_id in seen_judges:
            problems.append(f"judge_id {judge.judge_id!r} appears more than once")
        seen_judges.add(judge.judge_id)
    if problems:
        raise UserError("cannot plan the run: task ids are not unique", problems[:20])
    return [Task(item, judge) for judge in judges for item in items]


def pending_tasks(tasks: Iterable[Task], finished: Collection[TaskKey]) -> list[Task]:
    """The tasks whose key is not among ``finished``, in plan order."""
    return [t for t in tasks if t.key not in finished]
