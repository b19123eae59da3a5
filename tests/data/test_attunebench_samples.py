"""Counts on the synthetic sample conversations, tallied by hand from the files."""

from __future__ import annotations

from attune_judge.data import load_attunebench, summarize_attunebench
from tests.conftest import SAMPLES

# Hand tally per file (turns, turns with humanEdited, pairwise, binary judgements, tags):
#   5:   3, 3, 5 (general 3, PW1, PW4), 6, 5
#   12:  2, 2, 4 (general 2, custom, PW12), 3, 3   blinded alternates on both turns
#   17:  3, 3, 4 (general 2, PW3, PW5), 5, 4
#   23:  2, 2, 3 (general 2, PW10), 3, 3           2 null winners
#   31:  3, 1, 2 (general, PW7), 5, 1              turn 2 no alternates, turn 3 only llmImproved
#   48:  4, 4, 5 (general 3, PW8, PW9), 5, 5
#   102: 2, 2, 3 (general, custom, PW13), 3, 3     1 null winner
#   248: 3, 2, 4 (general 2, PW11, PW14), 5, 4     turn 2 alternateResponses null
# sums: turns 22, references 19, pairwise 30 (general 16, custom 2, 12 PW questions once),
#       binary 35, tags 28; LLM-improved on 22 - 2 (31:t2, 248:t2) = 20 turns.


def test_sample_counts_match_the_hand_tally() -> None:
    s = summarize_attunebench(load_attunebench(SAMPLES))
    assert s.conversations == 8
    assert s.turns == 22
    assert s.turns_with_reference == 19
    assert s.turns_with_llm_improved == 20
    assert s.blinded_turns == 2
    assert s.pairwise_comparisons == 30
    assert s.pairwise_by_question == {
        "general": 16,
        **{f"PW{i}": 1 for i in (1, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14)},
        "custom": 2,
    }
    assert s.pairwise_unanswered == 3
    assert s.behaviour_answers == 35
    # 31:t2 B16 is null/null -> not answered; 31:t1 B5 is na/na -> not applicable
    assert s.behaviour_observed_answered == 34
    assert s.behaviour_preferred_answered == 34
    assert s.behaviour_applicable == 34
    assert s.emotion_tags == 28
    assert s.turns_without_emotion_tags == 2  # 31: turns 1 and 3
    # Nervous: 5:t1, 23:t1, 23:t2, 48:t1, 102:t1; Upset: 5:t2, 17:t2, 48:t3, 248:t1, 248:t3
    assert s.emotion_counts["Nervous"] == 5 and s.emotion_counts["Upset"] == 5
    assert sum(s.emotion_counts.values()) == 28
    assert (s.pre_panas, s.post_panas) == (7, 8)  # 102 has prePanas null
    assert s.participant_profiles == 6  # 23 has no key, 48 has null


def test_sample_aliases_resolve_as_documented() -> None:
    convs = {c.conversation_id: c for c in load_attunebench(SAMPLES)}
    c17 = convs["synthetic-17"]
    assert c17.conversation_wide is not None
    assert c17.conversation_wide.q2_emotion_clarity == "Mixed or conflicted"  # from Q2
    # moderate -> 4, mild -> 2, intense -> 6
    assert [t.intensity for t in c17.turns[0].mood_shift_tags] == [4, 2]
    assert c17.turns[1].mood_shift_tags[0].intensity == 6
    b14 = c17.turns[1].annotations.binary_judgements[1]
    assert (b14.observed_behavior, b14.preferred_behavior) == ("yes", "no")  # actualValue
    # PANAS under responses, lower case, no totals: positive items of prePanas
    # proud 2 + alert 5 + inspired 2 + determined 4 + attentive 4 + active 3 + excited 2
    # + strong 2 + enthusiastic 2 + interested 3 = 29; negative 2+2+7+6+4+5+2+1+5+1 = 35
    pre = convs["synthetic-23"].pre_panas
    assert pre is not None
    assert (pre.total_positive_affect, pre.total_negative_affect) == (29, 35)
    assert convs["synthetic-48"].turns[3].mood_shift_tags[0].emotion == "Enthusiastic"
