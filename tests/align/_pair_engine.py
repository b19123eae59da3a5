"""A scripted pairwise judge model that learns from the demonstrations in its prompt.

Replies are ``<kind> reply ...``; the people prefer ``warm`` to ``curious`` and to ``flat``, and
call ``curious`` against ``flat`` a tie (:data:`PREFER`). Without a demonstration of the same two
kinds the model always answers ``A`` (pure position bias: in the two orders that is opposite
winners, ``inconsistent``). With such demonstrations it gives their majority verdict, turned to
the query's order. So only an optimizer that puts labelled pairs into the prompt improves it.
Lengths mislead: ``warm`` replies are the shortest, ``flat`` ones the longest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from attune_judge.data import ChatMessage, Preference, write_jsonl
from attune_judge.judges import pairwise_item

PREFER = {("warm", "curious"): "A", ("warm", "flat"): "A", ("curious", "flat"): "tie"}
PAIRS = list(PREFER)
SWAP = {"A": "B", "B": "A", "tie": "tie"}
_TEXT = {"warm": "{} reply {}", "curious": "{} reply {} . . . .", "flat": "{} reply {}" + " ." * 9}


def _field(name: str, text: str) -> str | None:
    m = re.search(rf"\[\[ ## {name} ## \]\]\n(.*?)(?:\n\n\[\[|\n\nRespond|\Z)", text, re.S)
    return m.group(1).strip() if m else None


def pair_of(text: str) -> tuple[str, str] | None:
    """(reply A, reply B) of a prompt message, if it shows a pair."""
    a, b = _field("reply_a", text), _field("reply_b", text)
    return (a, b) if a is not None and b is not None else None


def truth(kind_a: str, kind_b: str) -> str:
    """The people's verdict for replies of these kinds, in this order."""
    if (kind_a, kind_b) in PREFER:
        return PREFER[(kind_a, kind_b)]
    return SWAP[PREFER[(kind_b, kind_a)]]


def pair_learner(messages: list[dict[str, str]]) -> str:
    query = messages[-1]["content"]
    pair = pair_of(query)
    if pair is None:  # an instruction proposer / reflection program
        order = query.split("following order of fields:")[-1]
        fields = re.findall(r"`(\w+)`", order) or ["answer"]
        return json.dumps({f: "Choose the reply the person would prefer." for f in fields})
    ka, kb = (t.split()[0] for t in pair)
    votes: list[str] = []
    for user, assistant in zip(messages[1:-1:2], messages[2:-1:2], strict=False):
        demo = pair_of(user["content"])
        if demo is None:
            continue
        da, db = (t.split()[0] for t in demo)
        try:
            shown = str(json.loads(assistant["content"]).get("verdict"))
        except (json.JSONDecodeError, AttributeError):
            continue
        if (da, db) == (ka, kb):
            votes.append(shown)
        elif (da, db) == (kb, ka):
            votes.append(SWAP.get(shown, shown))
    verdict = max(("A", "B", "tie"), key=votes.count) if votes else "A"
    return json.dumps({"verdict": verdict, "rationale": "scripted"})


def noisy(c: int, t: int) -> bool:
    """Where the second person disagrees with the first."""
    return c % 4 == 1 and t == 0


def write_pairs(root: Path, conversations: int = 24, per_conv: int = 2) -> tuple[Path, Path]:
    """Pair items (JudgeItem JSONL) and two people's choices per pair (Preference JSONL).

    Person p1 always chooses :func:`truth`; p2 too, except on :func:`noisy` pairs, where p2
    says ``tie`` (or ``A`` when the truth is a tie).
    """
    items, prefs = [], []
    for c in range(conversations):
        for t in range(per_conv):
            ka, kb = PAIRS[(c + t) % len(PAIRS)]
            if (c * 7 + t) % 2:
                ka, kb = kb, ka
            iid = f"c{c}:{t}:pairwise:general:0"
            text_a, text_b = _TEXT[ka].format(ka, f"c{c}t{t}a"), _TEXT[kb].format(kb, f"c{c}t{t}b")
            items.append(
                pairwise_item(
                    iid,
                    f"c{c}",
                    [ChatMessage(role="user", content=f"I feel low today ({c}, {t}).")],
                    text_a,
                    text_b,
                    option_a="x",
                    option_b="y",
                    turn=t,
                )
            )
            first = truth(ka, kb)
            second = ("A" if first == "tie" else "tie") if noisy(c, t) else first
            for rater, winner in (("p1", first), ("p2", second)):
                prefs.append(
                    Preference(
                        item_id=iid,
                        option_a="x",
                        option_b="y",
                        text_a=text_a,
                        text_b=text_b,
                        winner=winner,
                        rater=rater,
                        cluster=f"c{c}",
                        metadata={"conversation_id": f"c{c}", "turn": t},
                    )
                )
    write_jsonl(root / "pairs.jsonl", items)
    write_jsonl(root / "prefs.jsonl", prefs)
    return root / "pairs.jsonl", root / "prefs.jsonl"
