"""The AttuneBench conversation file: turns, annotations and the conversation itself.

Read with every alias the release uses (see ATTUNEBENCH.md) and written back, by
:meth:`Conversation.to_official_json`, in the official key spelling, so that dump -> load gives
the same model.

Blinded alternates
------------------
Some files name the two alternative responses ``alternate1`` / ``alternate2`` instead of
``llmImproved`` / ``humanEdited``. The instrument (``pairwise_response_labels``) documents the
mapping used by the official code: pairwise label ``alternate`` = ``alternate1`` = the
LLM-improved response and label ``human`` = ``alternate2`` = the participant-edited response.
We follow that documented mapping (``llm_improved`` <- ``alternate1``, ``human_edited`` <-
``alternate2``), keep ``blinded=True`` on :class:`AlternateResponses` so the provenance is never
lost (files are written back with the blinded keys) and conversions record it in metadata;
:func:`attunebench_to_judge_items` can leave blinded turns out (``include_blinded=False``) for
anyone who does not want to rely on the mapping.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, SerializationInfo, model_serializer, model_validator

from attune_judge.data._attunebench_fields import (
    Answer,
    BehaviourId,
    Emotion,
    Intensity,
    OfficialModel,
    PairwiseQuestionId,
    ResponseLabelField,
    StrId,
    Winner,
    alias_field,
    problem,
)
from attune_judge.data._attunebench_survey import (
    ConversationWide,
    Metadata,
    Panas,
    ParticipantProfile,
)

__all__ = [
    "AlternateResponses",
    "Annotations",
    "BinaryJudgement",
    "Conversation",
    "MoodTag",
    "PairwiseComparison",
    "Turn",
]


class MoodTag(OfficialModel):
    """One emotion the participant tagged at this turn."""

    emotion: Emotion
    """A PANAS-SF item (instrument spelling; input in any case)."""
    intensity: Intensity = None
    """1..7, or ``None``; legacy words mild=2, moderate=4, intense=6 are converted."""


class BinaryJudgement(OfficialModel):
    """One behaviour item answered for the original model's response at this turn."""

    question_id: BehaviourId = alias_field("questionId")
    """Behaviour item id (``B1`` .. ``B505``)."""
    llm_value: Answer = alias_field("llmValue", default=None)
    """The value recorded for an LLM annotator (yes / no / na / None)."""
    observed_behavior: Answer = alias_field(
        "observedBehavior", "did_occur", "humanValue", "actualValue", default=None
    )
    """The participant's answer: did the original model do it?"""
    preferred_behavior: Answer = alias_field(
        "preferredBehavior", "should_occur", "humanPreference", default=None
    )
    """The participant's answer: did they want it?"""

    @property
    def applicable(self) -> bool:
        """The item applies when both answers are missing, or either is not ``na``.

        So it does not apply only when both the observed and the preferred answer are ``na``.
        """
        return self.observed_behavior != "na" or self.preferred_behavior != "na"


class AlternateResponses(OfficialModel):
    """The two alternatives to the original reply (see the module note on blinded files)."""

    llm_improved: str | None = None
    """The LLM-improved response (``llmImproved``; blinded files: ``alternate1``)."""
    human_edited: str | None = None
    """The participant-edited response (``humanEdited``; blinded: ``alternate2``): the reference."""
    blinded: bool = False
    """True when the file used the blinded keys ``alternate1`` / ``alternate2``."""

    @model_validator(mode="before")
    @classmethod
    def _read_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        official = {"llmImproved", "humanEdited"} & data.keys()
        blinded = {"alternate1", "alternate2"} & data.keys()
        if official and blinded:
            raise problem(
                "use either llmImproved/humanEdited or the blinded alternate1/alternate2, "
                f"not both (found {', '.join(sorted(official | blinded))})"
            )
        out = dict(data)
        if official:
            out["llm_improved"] = out.pop("llmImproved", None)
            out["human_edited"] = out.pop("humanEdited", None)
        if blinded:
            out["llm_improved"] = out.pop("alternate1", None)
            out["human_edited"] = out.pop("alternate2", None)
            out["blinded"] = True
        return out

    @model_serializer(mode="plain")
    def _write(self, info: SerializationInfo) -> dict[str, Any]:
        if not info.by_alias:
            return {
                "llm_improved": self.llm_improved,
                "human_edited": self.human_edited,
                "blinded": self.blinded,
            }
        if self.blinded:
            return {"alternate1": self.llm_improved, "alternate2": self.human_edited}
        return {"llmImproved": self.llm_improved, "humanEdited": self.human_edited}


class PairwiseComparison(OfficialModel):
    """The participant's choice between two of the turn's three responses for one question."""

    question_id: PairwiseQuestionId = alias_field("questionId")
    """``general``, ``PW1`` .. ``PW15`` or ``custom:<text>``."""
    response_a: ResponseLabelField = alias_field("responseA", "response_1")
    """Label of the response shown as A: ``original``, ``alternate`` or ``human``."""
    response_b: ResponseLabelField = alias_field("responseB", "response_2")
    """Label of the response shown as B."""
    winner: Winner = None
    """``A``, ``B``, or ``None`` when the participant did not choose."""

    @model_validator(mode="after")
    def _two_different(self) -> PairwiseComparison:
        if self.response_a == self.response_b:
            raise problem(f"responseA and responseB are both {self.response_a!r}", ".responseB")
        return self


class Annotations(OfficialModel):
    """What the participant annotated at one turn."""

    binary_judgements: list[BinaryJudgement] = alias_field("binaryJudgements", default_factory=list)
    """Behaviour items answered for the original response."""
    alternate_responses: AlternateResponses | None = alias_field("alternateResponses", default=None)
    """The LLM-improved and participant-edited alternatives, when the turn has them."""
    pairwise_comparisons: list[PairwiseComparison] = alias_field(
        "pairwiseComparisons", default_factory=list
    )
    """Pairwise choices between the turn's responses."""
    selected_pairwise_questions: list[PairwiseQuestionId] = alias_field(
        "selectedPairwiseQuestions", default_factory=list
    )
    """Which pairwise questions were shown at this turn."""


def _none_to_list(value: object) -> object:
    return [] if value is None else value


class Turn(OfficialModel):
    """One exchange: the participant's message, the original model's reply, the annotations."""

    turn_number: int = alias_field("turnNumber")
    """Position in the conversation (unique within it)."""
    user_message: str = alias_field("userMessage")
    """What the participant wrote."""
    llm_response: str = alias_field("llmResponse")
    """What the original model (OM) replied."""
    mood_shift_tags: list[MoodTag] = alias_field("moodShiftTags", default_factory=list)
    """The participant's emotions at this turn; empty = neutral / no shift."""
    annotations: Annotations = Field(default_factory=Annotations)
    """The participant's annotations of this turn."""

    @model_validator(mode="before")
    @classmethod
    def _null_tags(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("moodShiftTags", []) is None:
            return {**data, "moodShiftTags": []}
        return data

    @property
    def human_edited(self) -> str | None:
        """The participant-edited reference, or ``None`` when absent or empty."""
        alt = self.annotations.alternate_responses
        if alt is None or not (alt.human_edited or "").strip():
            return None
        return alt.human_edited

    @property
    def llm_improved(self) -> str | None:
        """The LLM-improved alternative, or ``None`` when absent or empty."""
        alt = self.annotations.alternate_responses
        if alt is None or not (alt.llm_improved or "").strip():
            return None
        return alt.llm_improved

    def response_for(self, label: str) -> str | None:
        """The text a pairwise label (``original`` / ``alternate`` / ``human``) designates."""
        if label == "original":
            return self.llm_response
        if label == "alternate":
            return self.llm_improved
        if label == "human":
            return self.human_edited
        raise KeyError(label)

    @model_validator(mode="after")
    def _labels_resolve(self) -> Turn:
        missing_key = {"alternate": "llmImproved/alternate1", "human": "humanEdited/alternate2"}
        for j, comp in enumerate(self.annotations.pairwise_comparisons):
            for side, label in (("responseA", comp.response_a), ("responseB", comp.response_b)):
                if self.response_for(label) is None:
                    raise problem(
                        f"pairwise label {label!r} resolves to no response: this turn has no "
                        f"{missing_key[label]} in alternateResponses",
                        f".annotations.pairwiseComparisons[{j}].{side}",
                    )
        return self


class Conversation(OfficialModel):
    """One AttuneBench conversation file."""

    conversation_id: StrId = alias_field("conversationId")
    """The conversation's id (integers are turned into strings)."""
    metadata: Metadata = Field(default_factory=Metadata)
    """Model, provider, topic, ... (extra keys kept)."""
    participant_profile: ParticipantProfile | None = None
    """Who the participant is; may be null or absent."""
    pre_panas: Panas | None = alias_field("prePanas", default=None)
    """PANAS-SF before the conversation."""
    post_panas: Panas | None = alias_field("postPanas", default=None)
    """PANAS-SF after the conversation."""
    conversation_wide: ConversationWide | None = alias_field(
        "conversationWideQuestions", default=None
    )
    """Questions answered once per conversation."""
    turns: list[Turn] = Field(min_length=1)
    """The turns, in file order."""

    @model_validator(mode="after")
    def _unique_turn_numbers(self) -> Conversation:
        seen: dict[int, int] = {}
        for i, turn in enumerate(self.turns):
            if turn.turn_number in seen:
                raise problem(
                    f"duplicate turn number {turn.turn_number} "
                    f"(also at turns[{seen[turn.turn_number]}])",
                    f".turns[{i}].turnNumber",
                )
            seen[turn.turn_number] = i
        return self

    def sorted_turns(self) -> list[Turn]:
        """The turns ordered by turn number."""
        return sorted(self.turns, key=lambda t: t.turn_number)

    def to_official_json(self) -> dict[str, Any]:
        """The conversation as the official JSON object (official keys, JSON types)."""
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        return data
