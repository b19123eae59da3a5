"""Baselines with no model: response length, and lexical similarity to the reference.

They answer "how much of a judge's verdict could length or word overlap explain?" and they
cost nothing. Tokens are lower-cased runs of word characters (``\\w+``).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import ClassVar

from attune_judge.data import JudgeItem, JudgeSpec, Judgment, TokenUsage
from attune_judge.judges._base import item_judgment, refusal_judgment

__all__ = ["LengthJudge", "LexicalJudge", "lcs_length", "rouge_l_f1", "token_f1", "tokens"]

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens.

    >>> tokens("I'm so sorry, Sam!")
    ['i', 'm', 'so', 'sorry', 'sam']
    """
    return _TOKEN.findall(text.lower())


def token_f1(candidate: list[str], reference: list[str]) -> float:
    """Bag-of-tokens F1 (SQuAD style): overlap counted with multiplicity.

    >>> round(token_f1(["a", "b", "c"], ["a", "b", "d", "e"]), 4)  # P=2/3, R=2/4
    0.5714
    """
    if not candidate or not reference:
        return 1.0 if candidate == reference else 0.0
    overlap = sum((Counter(candidate) & Counter(reference)).values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(candidate), overlap / len(reference)
    return 2 * precision * recall / (precision + recall)


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (dynamic programming, O(len(a)·len(b)))."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l_f1(candidate: list[str], reference: list[str]) -> float:
    """ROUGE-L F1 (β = 1): LCS-based precision and recall.

    >>> rouge_l_f1(["the", "cat", "sat"], ["the", "cat", "ran"])  # LCS 2: P = R = 2/3
    0.6666666666666666
    """
    lcs = lcs_length(candidate, reference)
    if lcs == 0:
        return 1.0 if not candidate and not reference else 0.0
    precision, recall = lcs / len(candidate), lcs / len(reference)
    return 2 * precision * recall / (precision + recall)


class BaselineJudge:
    """A judge with no model: its spec names the program; :meth:`judge` makes the judgment of
    what :meth:`_scores` measures on the item (or returns its refusal)."""

    program_name: ClassVar[str]

    def __init__(self) -> None:
        self.spec = JudgeSpec(program=self.program_name, program_version="1")
        self.judge_id = self.spec.judge_id()

    def _scores(self, item: JudgeItem) -> tuple[dict[str, float], float, float | None] | Judgment:
        """``(scores, overall, normalized)`` of the item, or a refusal."""
        raise NotImplementedError

    def judge(self, item: JudgeItem) -> Judgment:
        """Measure the candidate (see the class)."""
        started = time.perf_counter()
        measured = self._scores(item)
        if isinstance(measured, Judgment):
            return measured
        scores, overall, normalized = measured
        return item_judgment(
            item,
            self.judge_id,
            started,
            usage=TokenUsage(),
            scores=scores,
            overall=overall,
            normalized=normalized,
        )

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Same as :meth:`judge`."""
        return self.judge(item)


class LengthJudge(BaselineJudge):
    """Scores the candidate's length: ``words`` and ``chars``; ``overall`` = words.

    ``normalized`` is ``None``: length has no natural [0, 1] scale.
    """

    program_name = "length"

    def _scores(self, item: JudgeItem) -> tuple[dict[str, float], float, float | None]:
        """Count words and characters of the candidate."""
        words = float(len(tokens(item.candidate)))
        return {"words": words, "chars": float(len(item.candidate))}, words, None


class LexicalJudge(BaselineJudge):
    """Word overlap with the reference: ``token_f1`` and ``rouge_l``; ``overall`` = ROUGE-L F1.

    An item without a reference gets ``status="refused"`` (reason ``no_reference``).
    """

    program_name = "lexical"

    def _scores(self, item: JudgeItem) -> tuple[dict[str, float], float, float | None] | Judgment:
        """Compare the candidate's tokens with the reference's."""
        if not item.reference:
            return refusal_judgment(
                item, self.judge_id, "no_reference", f"item {item.item_id} has no reference"
            )
        cand, ref = tokens(item.candidate), tokens(item.reference)
        rouge = rouge_l_f1(cand, ref)
        return {"token_f1": token_f1(cand, ref), "rouge_l": rouge}, rouge, rouge
