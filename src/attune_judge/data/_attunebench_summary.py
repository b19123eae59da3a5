"""Counts describing a set of AttuneBench conversations (what ``data validate`` prints)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import instrument
from attune_judge.data._attunebench import Conversation

__all__ = ["AttuneBenchSummary", "summarize_attunebench"]


class AttuneBenchSummary(BaseModel):
    """What a set of conversations holds."""

    model_config = ConfigDict(extra="forbid")

    conversations: int
    """Number of conversations."""
    turns: int
    """Number of turns."""
    turns_with_reference: int
    """Turns with a participant-edited (human-edited) reference: the judge items."""
    turns_with_llm_improved: int
    """Turns with an LLM-improved alternative."""
    blinded_turns: int
    """Turns whose alternates use the blinded keys alternate1 / alternate2."""
    pairwise_comparisons: int
    """Pairwise comparisons, all questions together."""
    pairwise_by_question: dict[str, int] = Field(default_factory=dict)
    """Comparisons per question id (``general``, ``PW1``..; every ``custom:`` id counted
    under ``custom``), in instrument order."""
    pairwise_unanswered: int
    """Comparisons whose winner is null."""
    behaviour_answers: int
    """Binary behaviour judgements (one per item and turn)."""
    behaviour_observed_answered: int
    """Judgements with a non-null observed answer."""
    behaviour_preferred_answered: int
    """Judgements with a non-null preferred answer."""
    behaviour_applicable: int
    """Judgements whose item applies to the turn (not both answers ``na``)."""
    emotion_tags: int
    """Mood-shift tags."""
    turns_without_emotion_tags: int
    """Turns with an empty tag list (neutral / no shift)."""
    emotion_counts: dict[str, int] = Field(default_factory=dict)
    """Tags per PANAS-SF item (items never used are left out), in questionnaire order."""
    pre_panas: int
    """Conversations with a pre-conversation PANAS."""
    post_panas: int
    """Conversations with a post-conversation PANAS."""
    participant_profiles: int
    """Conversations with a participant profile."""


def summarize_attunebench(conversations: Iterable[Conversation]) -> AttuneBenchSummary:
    """Count conversations, turns, references, comparisons, answers and tags."""
    convs = list(conversations)
    turns = [t for c in convs for t in c.turns]
    comps = [p for t in turns for p in t.annotations.pairwise_comparisons]
    answers = [b for t in turns for b in t.annotations.binary_judgements]
    tags = [m for t in turns for m in t.mood_shift_tags]
    by_question = Counter(
        "custom" if p.question_id.startswith("custom:") else p.question_id for p in comps
    )
    order = [*instrument.PAIRWISE_QUESTIONS, "custom"]
    emotions = Counter(m.emotion for m in tags)
    return AttuneBenchSummary(
        conversations=len(convs),
        turns=len(turns),
        turns_with_reference=sum(t.human_edited is not None for t in turns),
        turns_with_llm_improved=sum(t.llm_improved is not None for t in turns),
        blinded_turns=sum(
            bool(t.annotations.alternate_responses and t.annotations.alternate_responses.blinded)
            for t in turns
        ),
        pairwise_comparisons=len(comps),
        pairwise_by_question={q: by_question[q] for q in order if by_question[q]},
        pairwise_unanswered=sum(p.winner is None for p in comps),
        behaviour_answers=len(answers),
        behaviour_observed_answered=sum(b.observed_behavior is not None for b in answers),
        behaviour_preferred_answered=sum(b.preferred_behavior is not None for b in answers),
        behaviour_applicable=sum(b.applicable for b in answers),
        emotion_tags=len(tags),
        turns_without_emotion_tags=sum(not t.mood_shift_tags for t in turns),
        emotion_counts={e: emotions[e] for e in instrument.PANAS_ITEMS if emotions[e]},
        pre_panas=sum(c.pre_panas is not None for c in convs),
        post_panas=sum(c.post_panas is not None for c in convs),
        participant_profiles=sum(c.participant_profile is not None for c in convs),
    )
