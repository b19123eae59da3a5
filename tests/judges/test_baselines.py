"""Baselines with no model: length and lexical overlap, hand-checked values."""

from __future__ import annotations

import pytest

from attune_judge.data import JudgeItem
from attune_judge.judges import build_judge

# private unit: the lexical baselines' tokenizer, LCS, ROUGE-L and token F1
from attune_judge.judges._baselines import lcs_length, rouge_l_f1, token_f1, tokens


def test_tokens_and_overlap_by_hand() -> None:
    cand = tokens("The cat sat on the mat")  # the cat sat on the mat
    ref = tokens("the cat lay on a mat")  # the cat lay on a mat
    # common bag: the, cat, on, mat = 4; P = 4/6, R = 4/6, F1 = 2/3
    assert token_f1(cand, ref) == pytest.approx(2 / 3)
    # LCS: the cat on mat = 4 -> ROUGE-L F1 = 2/3
    assert lcs_length(cand, ref) == 4
    assert rouge_l_f1(cand, ref) == pytest.approx(2 / 3)
    # order matters for LCS but not for the bag: reversed candidate
    # rev = mat the on sat cat the; the longest common subsequences with the reference are
    # "the on" and "the cat" (mat comes first in rev, last in ref) -> 2
    rev = list(reversed(cand))
    assert token_f1(rev, ref) == pytest.approx(2 / 3)
    assert lcs_length(rev, ref) == 2
    assert token_f1([], []) == 1.0 and token_f1(["a"], []) == 0.0


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
