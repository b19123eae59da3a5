"""Pure scorers of the AttuneBench tasks, on hand-computed cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from attune_judge.data.instrument import PANAS_ITEMS

# private unit: each bench task's scorer
from attune_judge.tasks._behaviour import Confusion, confusion_of, score_behaviour
from attune_judge.tasks._conversation import score_conversation
from attune_judge.tasks._drafting import behaviour_alignment, normalise_draft_scores, score_draft
from attune_judge.tasks._emotion import EmotionTag, score_emotion, set_prf
from attune_judge.tasks._preference import (
    kendall_tau_b,
    present_comparison,
    score_preferences,
    win_counts,
)

SQ2 = math.sqrt(2)

# --- emotion -------------------------------------------------------------------------------


def test_emotion_out_of_vocabulary_tag_is_a_false_positive_and_va_uses_optimal_matching():
    pred = [EmotionTag("afraid", 4), EmotionTag("Excited", 2), EmotionTag("sad", 5)]
    true = [EmotionTag("Afraid", 6), EmotionTag("Upset", 3)]
    m = score_emotion(pred, true)
    # predicted set {Afraid, Excited, ?sad} (3), true {Afraid, Upset} (2), TP = 1
    assert m["precision"] == pytest.approx(1 / 3)
    assert m["recall"] == pytest.approx(1 / 2)
    # F1 = 2 * (1/3)(1/2) / (1/3 + 1/2) = (1/3) / (5/6) = 0.4
    assert m["f1"] == pytest.approx(0.4)
    # VA coordinates (instrument file): Afraid (0.073, 0.84), Excited (0.8, 0.85),
    # Upset (0.167, 0.65). Assignments: {Afraid-Afraid 0, Excited-Upset hypot(.633, .2)}
    # total 0.6638 beats {Afraid-Upset hypot(.094,.19)=.212, Excited-Afraid hypot(.727,.01)
    # =.727} total 0.939. Sims 1 and 1 - 0.6638/√2; unmatched "sad" scores 0; / max(3, 2).
    d = math.hypot(0.8 - 0.167, 0.85 - 0.65)
    assert m["va_similarity"] == pytest.approx((1 + 1 - d / SQ2) / 3)
    # intensities over matched pairs: |4-6| = 2, |2-3| = 1 -> 1.5
    assert m["intensity_mae"] == pytest.approx(1.5)
    assert m["n_out_of_vocabulary"] == 1
    assert m["n_predicted"] == 3
    assert m["exact_match"] == 0


_tags = st.lists(
    st.builds(
        EmotionTag,
        st.sampled_from([*PANAS_ITEMS, "sad", "calm"]),
        st.one_of(st.none(), st.integers(1, 7)),
    ),
    max_size=5,
)
_true_tags = st.lists(
    st.builds(EmotionTag, st.sampled_from(PANAS_ITEMS), st.integers(1, 7)), max_size=4
)


@settings(deadline=None)  # the first call imports scipy.optimize lazily (~0.7 s)
@given(_tags, _true_tags)
# random draws rarely give equal non-empty sets: pin the "same" branch (case and intensity
# differ; duplicates collapse) and a near miss (one extra predicted emotion)
@example([EmotionTag("upset", None), EmotionTag("Upset", 2)], [EmotionTag("Upset", 6)])
@example([EmotionTag("Upset", 6), EmotionTag("Afraid", 1)], [EmotionTag("Upset", 6)])
def test_emotion_metrics_are_bounded_and_perfect_only_for_equal_sets(pred, true):
    m = score_emotion(pred, true)
    for key in ("precision", "recall", "f1", "va_similarity"):
        assert 0.0 <= m[key] <= 1.0 + 1e-12
    names = {t.emotion.lower() for t in pred}
    same = names == {t.emotion.lower() for t in true}
    assert (m["f1"] == 1.0) == same
    if same:
        assert m["va_similarity"] == 1.0


@given(st.sets(st.sampled_from("abcdef")), st.sets(st.sampled_from("abcdef")))
def test_set_f1_is_symmetric_and_precision_recall_swap(p, t):
    p1, r1, f1 = set_prf(p, t)
    p2, r2, f2 = set_prf(t, p)
    assert (p1, r1) == (r2, p2)
    assert f1 == f2


def test_emotion_neutral_cases_are_explicit():
    both_empty = score_emotion([], [])
    assert (both_empty["precision"], both_empty["recall"], both_empty["f1"]) == (1, 1, 1)
    assert both_empty["va_similarity"] == 1.0
    assert both_empty["intensity_mae"] is None
    assert both_empty["exact_match"] == 1
    tags_for_neutral = score_emotion([EmotionTag("Proud", 3)], [])
    assert tags_for_neutral["f1"] == 0 and tags_for_neutral["va_similarity"] == 0
    missed = score_emotion([], [EmotionTag("Proud", 3)])
    assert missed["recall"] == 0 and missed["va_similarity"] == 0


def test_emotion_duplicates_and_case_collapse_to_one_tag():
    m = score_emotion([EmotionTag(" proud ", 2), EmotionTag("PROUD", 7)], [EmotionTag("Proud", 4)])
    # one tag Proud (first intensity 2): P = R = F1 = 1, VA = 1, MAE = |2 - 4| = 2
    assert (m["precision"], m["recall"], m["f1"], m["va_similarity"]) == (1, 1, 1, 1)
    assert m["intensity_mae"] == 2


def test_set_prf_partial_overlap():
    # pred {a,b,c}, true {b,c,d,e}: TP 2, P 2/3, R 2/4, F1 = 2*2/(3+4) = 4/7
    p, r, f = set_prf(["a", "b", "c"], ["b", "c", "d", "e"])
    assert (p, r) == pytest.approx((2 / 3, 0.5))
    assert f == pytest.approx(4 / 7)


# --- behaviour -----------------------------------------------------------------------------


def test_confusion_metrics_by_hand():
    # tp 3, fp 1, fn 2, tn 4: acc 7/10; F1 = 6/(6+1+2) = 2/3;
    # MCC = (12 - 2) / sqrt(4 * 5 * 5 * 6) = 10 / sqrt(600)
    c = Confusion(3, 1, 2, 4)
    assert c.accuracy() == pytest.approx(0.7)
    assert c.f1() == pytest.approx(2 / 3)
    assert c.mcc() == pytest.approx(10 / math.sqrt(600))
    assert Confusion(0, 0, 0, 5).f1() is None
    assert Confusion(0, 0, 0, 5).mcc() is None
    assert Confusion().accuracy() is None


def test_missing_or_na_prediction_is_scored_as_the_wrong_answer():
    c = confusion_of([(None, "yes"), ("na", "no"), ("yes", "yes"), ("no", "no")])
    assert c.as_dict() == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}


def test_score_behaviour_per_turn_both_targets():
    truth = {
        "B1": ("yes", "yes"),
        "B2": ("no", "yes"),
        "B3": ("yes", "na"),  # preferred na: not scored for preferred
        "B4": (None, "no"),  # observed missing: not scored for observed
    }
    predicted = {
        "B1": {"observed": "yes", "preferred": "yes"},
        "B2": {"observed": "yes", "preferred": "no"},
        "B3": {"observed": "no"},
        # B4 not answered: an error for preferred ("no" -> scored as "yes", a false positive)
    }
    m = score_behaviour(truth, predicted)
    # observed: B1 yes/yes tp, B2 yes/no fp, B3 no/yes fn -> acc 1/3, F1 2/(2+1+1) = 0.5,
    # MCC: tn = 0 -> margin (tn + fp) = 1, (tn + fn) = 1, (tp+fp)=2, (tp+fn)=2:
    # (1*0 - 1*1)/sqrt(2*2*1*1) = -0.5
    assert m["observed_accuracy"] == pytest.approx(1 / 3)
    assert m["observed_f1"] == pytest.approx(0.5)
    assert m["observed_mcc"] == pytest.approx(-0.5)
    # preferred: B1 yes/yes tp, B2 no/yes fn, B4 missing/no fp -> acc 1/3, F1 2/4 = 0.5
    assert m["preferred_accuracy"] == pytest.approx(1 / 3)
    assert m["preferred_f1"] == pytest.approx(0.5)
    assert (m["preferred_tp"], m["preferred_fn"], m["preferred_fp"]) == (1, 1, 1)
    # pooled over both targets: 2 correct of 6
    assert m["accuracy"] == pytest.approx(2 / 6)


# --- preference ----------------------------------------------------------------------------


def test_presentation_is_seeded_and_unswaps():
    a = present_comparison(7, "c1", 1, 0)
    assert a == present_comparison(7, "c1", 1, 0)
    flips = [present_comparison(7, "c", i).swapped for i in range(200)]
    assert 60 < sum(flips) < 140  # a fair coin, not a constant
    swapped = type(a)(swapped=True)
    assert swapped.to_data("1") == "B" and swapped.to_data("2") == "A"
    straight = type(a)(swapped=False)
    assert straight.to_data("1") == "A" and straight.to_data(None) is None


def test_score_preferences_accuracy_and_win_count_tau():
    comps = [
        ("original", "human", "B"),
        ("alternate", "human", "B"),
        ("original", "alternate", "B"),
    ]
    # participant wins: original 0, alternate 1, human 2
    assert win_counts(comps) == [0, 1, 2]
    predicted = ["B", "A", "B"]  # right, wrong, right
    m = score_preferences(comps, predicted)
    assert m["accuracy"] == pytest.approx(2 / 3)
    # predicted wins: original 0, alternate 2 (2nd and 3rd), human 1 -> [0, 2, 1] vs [0, 1, 2]
    # pairs: (o,a) concordant, (o,h) concordant, (a,h) discordant -> tau = (2 - 1) / 3
    assert m["tau_win_counts"] == pytest.approx(1 / 3)
    assert kendall_tau_b([1, 1, 1], [0, 1, 2]) is None
    assert score_preferences([], [])["accuracy"] is None


# --- conversation --------------------------------------------------------------------------


def test_score_conversation_by_hand():
    from attune_judge.data.instrument import PANAS_ITEMS, Q3_MODEL_FIT_OPTIONS

    true_panas = dict.fromkeys(PANAS_ITEMS, 3)
    pred_panas = dict.fromkeys(PANAS_ITEMS, 3)
    pred_panas["Proud"] = 5  # positive item, error 2
    pred_panas["Afraid"] = 2  # negative item, error 1
    truth = {
        "post_panas": true_panas,
        "pa_total": 30,
        "na_total": 30,
        "q1": ["To just listen or let me vent", "Other"],
        "q2": "Implied or indirect",
        "q3": Q3_MODEL_FIT_OPTIONS[1],
        "four_branch": {"perceiving": 4, "facilitating": 4, "understanding": 4, "managing": 4},
    }
    predicted = {
        "post_panas": pred_panas,
        "q1": ["To just listen or let me vent"],
        "q2": "Implied or indirect",
        "q3": Q3_MODEL_FIT_OPTIONS[3],
        "four_branch": {"perceiving": 7, "facilitating": 4, "understanding": 4, "managing": 3},
    }
    m = score_conversation(predicted, truth)
    assert m["panas_item_mae"] == pytest.approx(3 / 20)  # (2 + 1) / 20
    assert m["panas_pa_abs_error"] == 2  # 32 vs 30
    assert m["panas_na_abs_error"] == 1  # 29 vs 30
    assert m["q1_f1"] == pytest.approx(2 / 3)  # P 1, R 1/2
    assert m["q2_exact"] == 1
    assert (m["q3_exact"], m["q3_distance"]) == (0, 2)
    assert m["four_branch_mae"] == pytest.approx(1.0)  # (3 + 0 + 0 + 1) / 4
    parts = [1 - 0.15 / 6, 2 / 3, 1, 1 - 2 / 3, 1 - 1 / 6]
    assert m["composite"] == pytest.approx(sum(parts) / 5)


def test_score_conversation_missing_truth_is_none_not_zero():
    m = score_conversation({"q2": "x"}, {"post_panas": None, "q2": None, "q3": None})
    assert m["panas_item_mae"] is None and m["q2_exact"] is None and m["q3_distance"] is None
    assert m["composite"] is None


# --- drafting ------------------------------------------------------------------------------


def test_draft_normalisation_and_alignment():
    # mean of 7, 5, 4, 4 = 5 -> (5 - 1) / 6 = 2/3
    assert normalise_draft_scores(
        {"overall_score": 7, "emotional_appropriateness": 5, "helpfulness": 4, "tone_match": 4}
    ) == pytest.approx(2 / 3)
    # B1 yes matches, B2 no vs yes mismatch, B3 missing answer mismatch, B4 na skipped -> 1/3
    assert behaviour_alignment(
        {"B1": "yes", "B2": "no", "B3": "yes", "B4": "na"}, {"B1": "yes", "B2": "yes"}
    ) == (pytest.approx(1 / 3), 3)
    m = score_draft(0.5, {"B4": "na"}, {})
    assert m == {"judge_score": 0.5, "alignment": None, "alignment_n": 0.0}
