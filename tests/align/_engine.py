"""A scripted judge model that learns from the demonstrations in its prompt (deterministic).

Replies are ``<kind> reply ...`` where the kind decides the people's scores. Without a
demonstration of the same kind the model answers 1 on every criterion; with one, it copies that
demonstration's scores. So an optimizer that puts the right labelled demonstrations into the
prompt truly improves the judge, and nothing else does. Prompts of other DSPy programs (the
instruction proposers of MIPROv2 and GEPA) get a generic JSON answer with every asked field.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from attune_judge.data import ChatMessage, JudgeItem, Rating, write_jsonl
from attune_judge.testing import Messages, TokenReply
from tests._openai_stub import StubServer, openai_stub

CRITERIA = ("level_emotional_reactions", "level_interpretations", "level_explorations")
TRUTH = {"warm": (2, 0, 0), "flat": (0, 0, 0), "curious": (0, 1, 2), "wise": (1, 2, 0)}
_FIELD = re.compile(r"\[\[ ## candidate_reply ## \]\]\n(.*?)(?:\n\n\[\[|\n\nRespond|\Z)", re.S)
_ASKED = re.compile(r"`(\w+)`")


def _reply(text: str) -> str | None:
    m = _FIELD.search(text)
    return m.group(1).strip() if m else None


def _kind(reply: str) -> str:
    return reply.split()[0]


def learner(messages: list[dict[str, str]]) -> str:
    """The responder: copy the scores of a same-kind demonstration, else answer 1s."""
    query = messages[-1]["content"]
    reply = _reply(query)
    if reply is None:  # a proposer/reflection program: answer every asked field with text
        order = query.split("following order of fields:")[-1]
        fields = _ASKED.findall(order) or ["answer"]
        return json.dumps({f: "Score each criterion from the reply's own words." for f in fields})
    scores = dict.fromkeys(CRITERIA, 1)
    for user, assistant in zip(messages[1:-1:2], messages[2:-1:2], strict=False):
        demo = _reply(user["content"])
        if demo is None or _kind(demo) != _kind(reply):
            continue
        try:
            shown = json.loads(assistant["content"])
        except json.JSONDecodeError:
            continue
        for c in CRITERIA:
            if isinstance(shown.get(c), int):
                scores[c] = shown[c]
        break
    return json.dumps({**scores, "rationale": "scripted"})


def write_labels(root: Path, conversations: int = 24, per_conv: int = 2) -> tuple[Path, Path]:
    """Items (``<kind> reply c<i> t<j>``) and two raters' ratings per item."""
    items, ratings = [], []
    kinds = list(TRUTH)
    for c in range(conversations):
        for t in range(per_conv):
            kind = kinds[(c + t) % len(kinds)]
            iid = f"c{c}:t{t}"
            items.append(
                JudgeItem(
                    item_id=iid,
                    conversation_id=f"c{c}",
                    turn=t,
                    context=[ChatMessage(role="user", content=f"I feel low today ({c}, {t}).")],
                    candidate=f"{kind} reply c{c} t{t}" + " ." * (c % 5),
                    candidate_model="bot",
                )
            )
            for rater, noise in (("p1", 0), ("p2", (c + t) % 3 == 0)):
                for dim, v in zip(CRITERIA, TRUTH[kind], strict=True):
                    value = min(2, v + 1) if noise and dim == CRITERIA[0] else v
                    ratings.append(
                        Rating(
                            item_id=iid, rater=rater, dimension=dim, value=value, cluster=f"c{c}"
                        )
                    )
    write_jsonl(root / "items.jsonl", items)
    write_jsonl(root / "ratings.jsonl", ratings)
    return root / "items.jsonl", root / "ratings.jsonl"


@contextlib.contextmanager
def served(
    responder: Callable[[Messages], str | TokenReply], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[StubServer, list[str]]]:
    """``responder`` behind an OpenAI-compatible server on loopback, for the CLI: (the server,
    whose ``requests`` are the calls made, and the ``--lm`` / ``--api-base`` options naming it).
    The request cache is off, as with a scripted engine: every call reaches the responder."""
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    with openai_stub(lambda body: responder(body["messages"])) as server:
        yield server, ["--lm", "openai/judge", "--api-base", server.url]
