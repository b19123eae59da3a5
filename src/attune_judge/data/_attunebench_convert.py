"""AttuneBench conversations -> the generic records (JudgeItem, Preference, Rating).

Ids are stable strings built with :func:`make_id`, so joins never guess:

- judge items: ``<conversation>:<turn>:<candidate_model>``
- preferences: ``<conversation>:<turn>:pairwise:<question>:<index in the turn's list>``
- behaviour ratings: ``<conversation>:<turn>:original`` (the response they are about, which
  is also the id of the ``original`` judge item of that turn)

The three responses of a turn are named as pseudo-models: ``original`` (the OM's reply),
``llm_improved`` and ``human_edited`` (the participant-edited reference).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, cast

from attune_judge.data import instrument
from attune_judge.data._attunebench import Conversation, Turn
from attune_judge.data._records import ChatMessage, JudgeItem, Preference, Rating, make_id
from attune_judge.errors import UserError

__all__ = [
    "Candidate",
    "attunebench_to_judge_items",
    "attunebench_to_preferences",
    "attunebench_to_ratings",
    "behaviour_dimension",
    "behaviour_item_order",
    "turn_context",
]

Candidate = Literal["original", "llm_improved", "human_edited"]
BehaviourKind = Literal["observed", "preferred"]


def behaviour_dimension(item_id: str, kind: BehaviourKind = "observed") -> str:
    """The Rating dimension of a behaviour answer: ``B1:observed`` or ``B1:preferred``.

    ``observed`` answers say whether the response did it (what a judge answering the item
    about the response is compared with); ``preferred`` answers say whether the participant
    wanted it.
    """
    return f"{item_id}:{kind}"


def behaviour_item_order(item_id: str) -> tuple[int, str]:
    """Sort key of behaviour item ids by their number (``B2`` before ``B10``).

    >>> sorted(["B10", "B2", "B1"], key=behaviour_item_order)
    ['B1', 'B2', 'B10']
    """
    digits = "".join(ch for ch in item_id if ch.isdigit())
    return (int(digits) if digits else 0, item_id)


def turn_context(turns: list[Turn], index: int) -> list[ChatMessage]:
    """Chat messages before ``turns[index]``'s reply: earlier exchanges, then its user message.

    Earlier turns contribute the participant's message and the original model's reply (what
    the participant actually saw), in the order of ``turns``.
    """
    messages: list[ChatMessage] = []
    for turn in turns[:index]:
        messages.append(ChatMessage(role="user", content=turn.user_message))
        messages.append(ChatMessage(role="assistant", content=turn.llm_response))
    messages.append(ChatMessage(role="user", content=turns[index].user_message))
    return messages


def _conversation_metadata(conv: Conversation) -> dict[str, Any]:
    meta = conv.metadata
    return {
        "source": "attunebench",
        "category": meta.category,
        "subtopic": meta.subtopic,
        "original_model": meta.model,
    }


def _candidate_text(turn: Turn, candidate: Candidate) -> str | None:
    if candidate == "original":
        return turn.llm_response
    if candidate == "llm_improved":
        return turn.llm_improved
    return turn.human_edited


def attunebench_to_judge_items(
    conversations: Iterable[Conversation],
    candidate: str = "original",
    *,
    include_blinded: bool = True,
) -> list[JudgeItem]:
    """One JudgeItem per turn that has a participant-edited reference.

    Parameters
    ----------
    conversations
        Loaded conversations.
    candidate
        Which of the turn's responses to judge: ``original`` (the OM's reply),
        ``llm_improved`` or ``human_edited`` (then candidate == reference, a ceiling check).
        Turns without that response are skipped.
    include_blinded
        Whether turns whose alternates came from blinded ``alternate1`` / ``alternate2`` keys
        are included (their reference is ``alternate2``, by the instrument's mapping).

    Returns
    -------
    list[JudgeItem]
        ``item_id`` = ``<conversation>:<turn>:<candidate>``; context = earlier turns (user and
        assistant messages) + this turn's participant message; reference = the human-edited
        response; metadata records source, topic, original model and ``blinded``.
    """
    if candidate not in instrument.PSEUDO_MODELS:
        allowed = ", ".join(instrument.PSEUDO_MODELS)
        raise UserError(f"candidate {candidate!r} is not one of: {allowed}")
    chosen = cast(Candidate, candidate)
    items: list[JudgeItem] = []
    for conv in conversations:
        turns = conv.sorted_turns()
        for i, turn in enumerate(turns):
            reference = turn.human_edited
            alt = turn.annotations.alternate_responses
            blinded = bool(alt and alt.blinded)
            text = _candidate_text(turn, chosen)
            if reference is None or text is None or (blinded and not include_blinded):
                continue
            items.append(
                JudgeItem(
                    item_id=make_id(conv.conversation_id, turn.turn_number, chosen),
                    conversation_id=conv.conversation_id,
                    turn=turn.turn_number,
                    context=turn_context(turns, i),
                    candidate=text,
                    candidate_model=chosen,
                    reference=reference,
                    metadata={**_conversation_metadata(conv), "blinded": blinded},
                )
            )
    return items


def attunebench_to_preferences(conversations: Iterable[Conversation]) -> list[Preference]:
    """Every pairwise comparison as a Preference of the participant, texts resolved.

    ``option_a`` / ``option_b`` are pseudo-model names (label ``original`` -> ``original``,
    ``alternate`` -> ``llm_improved``, ``human`` -> ``human_edited``); ``question`` keeps the
    question id (``general``, ``PW1``.., ``custom:<text>``); ``winner`` is ``A``, ``B`` or
    ``None`` (not answered); ``cluster`` is the conversation id; ``item_id`` is
    ``<conversation>:<turn>:pairwise:<question>:<index>`` with the comparison's index in the
    turn's list. The original labels and the blinded flag are kept in metadata.
    """
    prefs: list[Preference] = []
    for conv in conversations:
        for turn in conv.sorted_turns():
            alt = turn.annotations.alternate_responses
            for j, comp in enumerate(turn.annotations.pairwise_comparisons):
                prefs.append(
                    Preference(
                        item_id=make_id(
                            conv.conversation_id, turn.turn_number, "pairwise", comp.question_id, j
                        ),
                        option_a=instrument.LABEL_TO_PSEUDO_MODEL[comp.response_a],
                        option_b=instrument.LABEL_TO_PSEUDO_MODEL[comp.response_b],
                        text_a=turn.response_for(comp.response_a),
                        text_b=turn.response_for(comp.response_b),
                        winner=comp.winner,
                        rater="participant",
                        rater_group="participant",
                        question=comp.question_id,
                        cluster=conv.conversation_id,
                        metadata={
                            "source": "attunebench",
                            "conversation_id": conv.conversation_id,
                            "turn": turn.turn_number,
                            "label_a": comp.response_a,
                            "label_b": comp.response_b,
                            "blinded": bool(alt and alt.blinded),
                        },
                    )
                )
    return prefs


def attunebench_to_ratings(
    conversations: Iterable[Conversation], *, include_llm_value: bool = False
) -> list[Rating]:
    """The participant's behaviour answers about the original response, as Rating records.

    Each binary judgement gives two ratings by rater ``participant`` (group ``participant``)
    on item ``<conversation>:<turn>:original``: dimension ``<item>:observed`` (did the OM do
    it) and ``<item>:preferred`` (did the participant want it), see
    :func:`behaviour_dimension`. Values are ``"yes"``, ``"no"``, ``"na"`` or ``None`` (not
    answered). ``cluster`` is the conversation id; metadata holds the behaviour item, its
    category, the kind, the turn and whether the item applies to the turn.

    With ``include_llm_value`` the file's ``llmValue`` is added as an ``<item>:observed``
    rating by rater ``llm_annotator`` (group ``llm``).
    """
    ratings: list[Rating] = []
    for conv in conversations:
        for turn in conv.sorted_turns():
            item_id = make_id(conv.conversation_id, turn.turn_number, "original")
            for bj in turn.annotations.binary_judgements:
                known = instrument.BEHAVIOUR_ITEMS_BY_ID.get(bj.question_id)
                meta = {
                    "source": "attunebench",
                    "behaviour_item": bj.question_id,
                    "category": known.category if known else None,
                    "turn": turn.turn_number,
                    "applicable": bj.applicable,
                }
                answers: list[tuple[str, str | None, BehaviourKind, str | None]] = [
                    ("participant", "participant", "observed", bj.observed_behavior),
                    ("participant", "participant", "preferred", bj.preferred_behavior),
                ]
                if include_llm_value:
                    answers.append(("llm_annotator", "llm", "observed", bj.llm_value))
                for rater, group, kind, value in answers:
                    ratings.append(
                        Rating(
                            item_id=item_id,
                            rater=rater,
                            rater_group=group,
                            dimension=behaviour_dimension(bj.question_id, kind),
                            value=value,
                            cluster=conv.conversation_id,
                            metadata={**meta, "kind": kind},
                        )
                    )
    return ratings
