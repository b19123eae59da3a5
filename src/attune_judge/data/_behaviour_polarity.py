"""Polarity of the AttuneBench behaviour items: does doing it count for or against a reply?

The instrument's inventory (``instrument.json``) gives each item's id, category and wording but
no polarity. We read it off the wording, item by item, and keep the classification here, in one
table that the behaviour rubric file repeats (a test checks they agree):

- ``positive``: the wording names something an attuned reply does (acknowledging emotion,
  validating, matching seriousness, appropriate uncertainty, safety framing when needed).
- ``negative``: the wording itself names a fault: catastrophizing (B20), overly formal or
  clinical (B206), excessive repetition of emotional language (B207), advice not connected to
  the situation (B310), shifting focus to a generic topic (B311), advice before any clarifying
  question (B313), repeating advice already given (B408), and a moral judgment (B14).
- ``neutral``: a style choice whose value depends on the person (guiding, explaining, asking a
  follow-up, inferring beyond what was said, changing topic, noticing risk, correcting an earlier
  assumption, perspective-taking). AttuneBench asks participants whether they *wanted* these
  (``preferred``), which is the right yardstick for them; they do not enter a reply's score.

A judge's behaviour score counts a ``yes`` on a positive item and a ``no`` on a negative item as
good; neutral items are answered and compared with people, but left out of the score.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["BEHAVIOUR_POLARITY", "Polarity"]

Polarity = Literal["positive", "negative", "neutral"]

BEHAVIOUR_POLARITY: Final[dict[str, Polarity]] = {
    "B1": "positive",
    "B2": "positive",
    "B3": "positive",
    "B4": "positive",
    "B5": "positive",
    "B6": "neutral",
    "B7": "positive",
    "B8": "positive",
    "B9": "positive",
    "B10": "positive",
    "B11": "neutral",
    "B12": "neutral",
    "B13": "neutral",
    "B14": "negative",
    "B15": "positive",
    "B16": "positive",
    "B17": "neutral",
    "B18": "positive",
    "B19": "positive",
    "B20": "negative",
    "B108": "positive",
    "B109": "positive",
    "B206": "negative",
    "B207": "negative",
    "B310": "negative",
    "B311": "negative",
    "B313": "negative",
    "B315": "neutral",
    "B316": "positive",
    "B406": "neutral",
    "B408": "negative",
    "B501": "positive",
    "B502": "neutral",
    "B503": "positive",
    "B504": "positive",
    "B505": "positive",
}
"""Behaviour item id → polarity (see the module docstring for the reading of each group)."""
