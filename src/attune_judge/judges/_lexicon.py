"""A lexicon baseline: how many words of an empathic-language list a reply uses.

No model, no reference. It answers "could counting feeling words and acknowledgements explain
the judge's verdicts?". The list (:data:`EMPATHY_LEXICON`) is ours, written for this project:
words that name feelings, acknowledge, validate, apologise or invite the person to say more.
Tokens are :func:`attune_judge.judges._baselines.tokens` (lower-cased ``\\w+`` runs); a phrase entry
(``"must be"``) counts each occurrence of its token sequence.
"""

from __future__ import annotations

from attune_judge.data import JudgeItem
from attune_judge.judges._baselines import BaselineJudge, tokens

__all__ = ["EMPATHY_LEXICON", "LexiconJudge", "lexicon_count"]

EMPATHY_LEXICON: tuple[str, ...] = (
    # feelings named
    "feel", "feeling", "feelings", "felt", "sad", "sadness", "upset", "hurt", "hurts",
    "painful", "pain", "angry", "anger", "frustrated", "frustrating", "frustration", "scared",
    "afraid", "fear", "worried", "worry", "worrying", "anxious", "anxiety", "stress",
    "stressful", "stressed", "overwhelmed", "overwhelming", "lonely", "alone", "disappointed",
    "disappointing", "heartbreaking", "devastating", "tough", "hard", "difficult", "rough",
    "happy", "glad", "proud", "excited", "relieved", "grateful",
    # acknowledging and validating
    "understand", "understandable", "understandably", "sounds", "seems", "must be",
    "makes sense", "of course", "natural", "normal", "valid", "right to", "no wonder",
    "i hear", "i see", "i imagine", "can imagine", "i know how",
    # caring and apologising
    "sorry", "care", "support", "here for you", "with you", "thank you for sharing",
    "hope", "hug", "wish",
    # inviting more
    "how are you", "how do you", "how did you", "what happened", "tell me", "want to talk",
    "would you like",
)  # fmt: skip
"""Entries of one or more words (matched on word tokens)."""


def _entries(lexicon: tuple[str, ...]) -> list[tuple[str, ...]]:
    return [tuple(tokens(entry)) for entry in lexicon]


def lexicon_count(text: str, lexicon: tuple[str, ...] = EMPATHY_LEXICON) -> int:
    """Occurrences of the lexicon's entries in ``text`` (phrases by token sequence).

    >>> lexicon_count("I'm so sorry. That must be hard, I understand.")
    4
    """
    words = tokens(text)
    count = 0
    for entry in _entries(lexicon):
        n = len(entry)
        if n == 0:
            continue
        count += sum(1 for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == entry)
    return count


class LexiconJudge(BaselineJudge):
    """Counts empathic-language words in the candidate: ``lexicon`` = the count, ``overall`` too.

    ``normalized`` is ``None`` (a count has no natural [0, 1] scale).
    """

    program_name = "lexicon"

    def _scores(self, item: JudgeItem) -> tuple[dict[str, float], float, float | None]:
        """Count lexicon entries in the candidate."""
        count = float(lexicon_count(item.candidate))
        return {"lexicon": count}, count, None
