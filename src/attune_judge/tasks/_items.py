"""AttuneBench conversations -> the units each task evaluates, with their ground truth.

A unit is a :class:`~attune_judge.data.JudgeItem` whose ``metadata`` carries what the task's
program needs (``task``, ``inputs``) and the participant's answers (``truth``), so a unit can be
evaluated and scored without looking anything else up. Item ids:

- emotion, behaviour, drafting: ``conversation:turn:task``;
- preference: ``conversation:turn:preference:<index of the comparison in the turn>``;
- conversation: ``conversation:conversation``.

Units without ground truth are not made: turns without mood-tag data are still made (an empty
tag list is the ``neutral`` answer), behaviour units need at least one applicable item with a
yes/no answer, preference units need a participant choice, drafting units a participant-edited
reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from attune_judge.data import ChatMessage, JudgeItem, make_id
from attune_judge.data.instrument import BEHAVIOUR_ITEMS_BY_ID, PAIRWISE_QUESTIONS

__all__ = ["TASKS", "TaskName", "conversation_context", "task_units"]

TaskName = Literal["drafting", "emotion", "behaviour", "preference", "conversation"]
TASKS: tuple[TaskName, ...] = ("drafting", "emotion", "behaviour", "preference", "conversation")
"""The five AttuneBench evaluated-model tasks, in report order."""


def conversation_context(conv: Any, upto_turn: int | None = None) -> list[ChatMessage]:
    """Chat messages of the turns before ``upto_turn`` (participant + original replies), then the
    participant's message of ``upto_turn``. ``None``: the whole conversation."""
    messages: list[ChatMessage] = []
    for turn in conv.sorted_turns():
        if upto_turn is not None and turn.turn_number > upto_turn:
            break
        messages.append(ChatMessage(role="user", content=turn.user_message))
        if upto_turn is not None and turn.turn_number == upto_turn:
            break
        messages.append(ChatMessage(role="assistant", content=turn.llm_response))
    return messages


def _item(conv: Any, turn: int | None, model: str, *parts: object, **metadata: Any) -> JudgeItem:
    context = conversation_context(conv, turn)
    return JudgeItem(
        item_id=make_id(conv.conversation_id, turn, *parts),
        conversation_id=conv.conversation_id,
        turn=turn,
        context=context,
        candidate=metadata.pop("candidate", ""),
        candidate_model=model,
        reference=metadata.pop("reference", None),
        metadata=metadata,
    )


def _behaviour_truth(turn: Any) -> dict[str, list[str | None]]:
    return {
        bj.question_id: [bj.observed_behavior, bj.preferred_behavior]
        for bj in turn.annotations.binary_judgements
        if bj.applicable and bj.question_id in BEHAVIOUR_ITEMS_BY_ID
    }


def _turn_units(conv: Any, turn: Any, task: TaskName, model: str) -> list[JudgeItem]:
    n = turn.turn_number
    if task == "emotion":
        truth = [{"emotion": t.emotion, "intensity": t.intensity} for t in turn.mood_shift_tags]
        return [_item(conv, n, model, task, task=task, truth={"tags": truth})]
    behaviour = _behaviour_truth(turn)
    if task == "behaviour":
        if not any(v in ("yes", "no") for pair in behaviour.values() for v in pair):
            return []
        items = {"items": behaviour}
        return [_item(conv, n, model, task, task=task, candidate=turn.llm_response, truth=items)]
    if task == "drafting":
        if turn.human_edited is None:
            return []
        preferred = {i: pair[1] for i, pair in behaviour.items()}
        return [
            _item(
                conv,
                n,
                model,
                task,
                task=task,
                reference=turn.human_edited,
                truth={"preferred": preferred},
                behaviour_items=list(behaviour),
            )
        ]
    units = []
    for index, comp in enumerate(turn.annotations.pairwise_comparisons):
        if comp.winner not in ("A", "B"):
            continue
        question = PAIRWISE_QUESTIONS.get(comp.question_id)
        if question is None:
            question = comp.question_id.removeprefix("custom:").strip()
        units.append(
            _item(
                conv,
                n,
                model,
                task,
                index,
                task=task,
                question_id=comp.question_id,
                inputs={
                    "question": question,
                    "label_a": comp.response_a,
                    "label_b": comp.response_b,
                    "text_a": turn.response_for(comp.response_a),
                    "text_b": turn.response_for(comp.response_b),
                },
                truth={"winner": comp.winner},
            )
        )
    return units


def _panas_text(panas: Any) -> str:
    if panas is None or not panas.items:
        return "(not available)"
    return ", ".join(f"{k}: {v}" for k, v in panas.items.items())


def _conversation_unit(conv: Any, model: str) -> JudgeItem | None:
    wide = conv.conversation_wide
    post = conv.post_panas
    if wide is None and (post is None or not post.items):
        return None
    fb = wide.four_branch_scores if wide is not None else None
    truth = {
        "post_panas": dict(post.items) if post is not None and post.items else None,
        "pa_total": post.total_positive_affect if post is not None else None,
        "na_total": post.total_negative_affect if post is not None else None,
        "q1": list(wide.q1_looking_for) if wide is not None else None,
        "q2": wide.q2_emotion_clarity if wide is not None else None,
        "q3": wide.q3_model_fit if wide is not None else None,
        "four_branch": fb.model_dump() if fb is not None else None,
    }
    return _item(
        conv,
        None,
        model,
        "conversation",
        task="conversation",
        inputs={"pre_panas": _panas_text(conv.pre_panas)},
        truth=truth,
    )


def task_units(conversations: Sequence[Any], task: TaskName, model: str) -> list[JudgeItem]:
    """Every unit of ``task`` in ``conversations`` for the evaluated model ``model``."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}")
    units: list[JudgeItem] = []
    for conv in conversations:
        if task == "conversation":
            unit = _conversation_unit(conv, model)
            if unit is not None:
                units.append(unit)
            continue
        for turn in conv.sorted_turns():
            units.extend(_turn_units(conv, turn, task, model))
    return units
