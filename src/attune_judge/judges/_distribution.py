"""Scores from token probabilities: the distribution over a scale's tokens at the score position.

The judge asks for a bare answer (a digit, or yes/no) and reads the model's next-token
log-probabilities at the first non-blank answer token (the *score position*). Tokens that
spell a scale level (``"3"``, ``" 3"``; for checklists ``yes``/``no`` in any case) add up to
that level's probability. The probabilities are renormalised over the scale's levels, which
is the distribution of the first answer token when decoding is restricted to the scale's tokens
(as constrained decoding does): the answer is always a level, so a score does not depend on
where a limit falls. The share of the mass outside the levels (other tokens, and tokens not
among the reported top alternatives) is kept as ``out_of_scale``, a diagnostic: the runner
warns when it exceeds :data:`WARN_OUT_OF_SCALE` on most items. Only an answer with no
probability on any level is not a score (the caller records a ``parse_error``), and so is any
answer above an explicit ``max_out_of_scale`` a caller sets.

Worked example (levels 1..3; probabilities 0.5, 0.25, 0.25 on "1", "2", "3")::

    expected = 1(0.5) + 2(0.25) + 3(0.25) = 1.75
    entropy  = -(0.5 log2 0.5 + 2 · 0.25 log2 0.25) = 0.5 + 1 = 1.5 bits
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_MAX_OUT_OF_SCALE",
    "WARN_OUT_OF_SCALE",
    "ScoreDistribution",
    "TokenProbs",
    "level_probabilities",
    "position_logprobs",
    "read_distribution",
]

DEFAULT_MAX_OUT_OF_SCALE = 1.0
"""Above this share of probability outside the scale's tokens, the answer is a parse error.

1.0 (no limit) by default: the distribution is read as decoding restricted to the scale's
tokens. A limit inside (0, 1) sits where a small model's answers fall (SmolLM2 put 0.50-0.53
outside on EPITOME), so whether an item was scored depended on rounding (issue 23)."""

WARN_OUT_OF_SCALE = 0.5
"""Above this share outside the scale's tokens, an answer counts towards the ``off_scale``
warning (:func:`attune_judge.runner.degenerate_judgments`)."""

TokenProbs = Mapping[str, float]
"""Log-probabilities of the alternatives at one position: token text -> natural log."""


class ScoreDistribution(BaseModel):
    """The model's probability distribution over a criterion's levels at the score position."""

    model_config = ConfigDict(extra="forbid")

    probabilities: dict[str, float] = Field(default_factory=dict)
    """Level (as text: ``"1"``..``"5"``, or ``"0"``/``"1"`` for no/yes) -> probability,
    renormalised over the levels (sums to 1)."""
    expected: float
    """Probability-weighted mean level (the score in ``expected`` mode)."""
    mode: int
    """Most probable level (lowest level on ties)."""
    entropy_bits: float
    """Shannon entropy of the renormalised distribution, in bits (0 = certain)."""
    out_of_scale: float
    """Share of the position's probability mass on tokens that spell no level (in [0, 1]);
    includes mass on tokens the server did not report among its top alternatives."""
    answer_token: str | None = None
    """The token the model actually produced at the score position (greedy)."""


def level_probabilities(
    top: TokenProbs, labels: Mapping[int, Sequence[str]]
) -> tuple[dict[int, float], float]:
    """Probability per level and the total mass of ``top``'s tokens.

    Parameters
    ----------
    top
        Token text -> log-probability at the score position (duplicates of one spelling,
        e.g. ``"3"`` and ``" 3"``, are separate tokens and both count).
    labels
        Level -> spellings that mean it (compared after stripping blanks, case-insensitively).

    Returns
    -------
    (dict, float)
        Level -> summed probability (levels never seen get 0), and the summed probability of
        every reported token (at most 1; the rest was not reported).
    """
    spelling = {s.strip().lower(): level for level, names in labels.items() for s in names}
    probs = dict.fromkeys(labels, 0.0)
    reported = 0.0
    for token, logprob in top.items():
        p = math.exp(logprob)
        reported += p
        level = spelling.get(token.strip().lower())
        if level is not None:
            probs[level] += p
    return probs, min(reported, 1.0)


def read_distribution(
    top: TokenProbs,
    labels: Mapping[int, Sequence[str]],
    answer_token: str | None = None,
) -> ScoreDistribution:
    """The renormalised distribution over ``labels``' levels from one position's log-probs.

    Raises
    ------
    ValueError
        No probability at all on the scale's tokens (nothing to renormalise).

    Examples
    --------
    >>> import math
    >>> d = read_distribution({"1": math.log(0.4), " 2": math.log(0.2), "x": math.log(0.4)},
    ...                       {1: ["1"], 2: ["2"]})
    >>> round(d.expected, 4), d.mode, round(d.out_of_scale, 4)
    (1.3333, 1, 0.4)
    """
    probs, _ = level_probabilities(top, labels)
    inside = sum(probs.values())
    if inside <= 0.0:
        raise ValueError("no probability on any of the scale's tokens")
    norm = {level: p / inside for level, p in probs.items()}
    expected = sum(level * p for level, p in norm.items())
    best = max(norm.values())
    mode = min(level for level, p in norm.items() if p == best)
    entropy = -sum(p * math.log2(p) for p in norm.values() if p > 0.0)
    return ScoreDistribution(
        probabilities={str(level): p for level, p in sorted(norm.items())},
        expected=expected,
        mode=mode,
        entropy_bits=max(entropy, 0.0),
        out_of_scale=min(max(1.0 - inside, 0.0), 1.0),
        answer_token=answer_token,
    )


def _logaddexp(a: float, b: float) -> float:
    high = max(a, b)
    return high + math.log(math.exp(a - high) + math.exp(b - high))


def position_logprobs(tokens: Sequence[Any]) -> tuple[str, dict[str, float]] | None:
    """The chosen token and its alternatives at the score position of a generated answer.

    The score position is the first generated token that is not blank (a leading space or
    newline token is skipped). ``tokens`` are DSPy ``TokenLogprob`` objects (``token``,
    ``logprob``, ``top`` of ``TopLogprob``); the chosen token is added to its alternatives
    when the provider left it out. ``None`` when every token is blank (or there is none).
    """
    for entry in tokens:
        token = str(entry.token)
        if not token.strip():
            continue
        top: dict[str, float] = {}
        seen_chosen = False
        for alt in entry.top:
            text, value = str(alt.token), float(alt.logprob)
            seen_chosen = seen_chosen or (text == token and value == float(entry.logprob))
            # two token ids spelling the same text: their probabilities add up
            top[text] = _logaddexp(top[text], value) if text in top else value
        if not seen_chosen and token not in top:
            top[token] = float(entry.logprob)
        return token, top
    return None
