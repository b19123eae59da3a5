"""Baselines with no model: length and lexical overlap, hand-checked values."""

from __future__ import annotations

import pytest

from attune_judge.data import JudgeItem
from attune_judge.judges import build_judge


def test_tokens_and_overlap_by_hand(item: JudgeItem) -> None:
    judge = build_judge("lexical")

    def scores(candidate: str, reference: str) -> dict[str, float]:
        update = {"candidate": candidate, "reference": reference}
        result = judge.judge(item.model_copy(update=update))
        assert result.status == "ok" and result.overall == result.scores["rouge_l"]
        return result.scores

    # lower-cased words: the cat sat on the mat / the cat lay on a mat
    # common bag: the, cat, on, mat = 4; P = 4/6, R = 4/6, F1 = 2/3
    # LCS: the cat on mat = 4 -> ROUGE-L F1 = 2/3
    got = scores("The cat sat on the mat", "the cat lay on a mat")
    assert got["token_f1"] == pytest.approx(2 / 3) and got["rouge_l"] == pytest.approx(2 / 3)
    # order matters for LCS but not for the bag: reversed candidate
    # rev = mat the on sat cat the; the longest common subsequences with the reference are
    # "the on" and "the cat" (mat comes first in rev, last in ref) -> 2: P = R = 2/6
    got = scores("mat the on sat cat the", "the cat lay on a mat")
    assert got["token_f1"] == pytest.approx(2 / 3) and got["rouge_l"] == pytest.approx(1 / 3)
    # a reference without a word: nothing in common
    assert scores("a", "!!!") == {"token_f1": 0.0, "rouge_l": 0.0}
    assert scores("?", "!!!") == {"token_f1": 1.0, "rouge_l": 1.0}  # no words on either side


def test_length_judge(item: JudgeItem) -> None:
    result = build_judge("length").judge(item)
    # "Many people fail. Just try again." -> 6 words, 33 characters
    assert result.scores == {"words": 6.0, "chars": 33.0}
    assert result.overall == 6.0 and result.normalized is None and result.status == "ok"


def test_lexical_judge(item: JudgeItem) -> None:
    result = build_judge("lexical").judge(
        item.model_copy(update={"candidate": "the cat sat", "reference": "the cat ran"})
    )
    # LCS 2 of 3 and 3 -> P = R = F1 = 2/3
    assert result.overall == pytest.approx(2 / 3) and result.normalized == result.overall
    assert result.scores["token_f1"] == pytest.approx(2 / 3)
    refused = build_judge("lexical").judge(item.model_copy(update={"reference": None}))
    assert refused.status == "refused"
