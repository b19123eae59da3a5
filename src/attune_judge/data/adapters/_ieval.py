"""iEval (Svikhnushina et al. 2022): each participant chatted with four anonymised bots on the
same emotional scenario, rated each bot on Likert statements and ranked the four (ties allowed).

Layout read: ``ieval_data.json``, a list of tasks; each task has a ``positive`` and a
``negative`` scenario, each with four bots keyed by colour. A chat log is lines starting with
``- `` with speakers alternating, participant first; a line without the prefix continues the
previous message. ``_x000D_`` (a spreadsheet carriage-return escape) is removed.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Literal

from attune_judge.data._records import ChatMessage, JudgeItem, Preference, Rating
from attune_judge.data.adapters._result import (
    AdapterReport,
    AdapterResult,
    messages_to_item,
    parse_number,
    require_dir,
    value_ranges,
)
from attune_judge.errors import UserError

__all__ = ["IEVAL_BOTS", "IEVAL_STATEMENTS", "convert_ieval", "parse_ieval_chat_log"]

IEVAL_BOTS = ("Pink", "Purple", "Yellow", "Green")
IEVAL_STATEMENTS: dict[str, str] = {
    "P": "The chatbot was polite throughout our conversation.",
    "^P": "Some of the chatbot's responses were insulting.",
    "A": "The chatbot was paying attention to what I was saying.",
    "^A": "The chatbot was inattentive to my messages.",
    "EU": "The chatbot understood my emotions.",
    "ER": "The chatbot responded to my emotions appropriately.",
    "L": "The chatbot is likable.",
    "R": "The chatbot was repetitive.",
    "S": "The chatbot's responses made sense given my inputs.",
    "Rating": "Overall rating of the chatbot (inverse of its rank; higher is better).",
}
"""Likert item code -> statement (from the dataset README); ``^`` items are reverse-worded."""
_LIKERT = (1.0, 5.0)
_VALENCES = ("positive", "negative")


def parse_ieval_chat_log(text: str) -> list[ChatMessage]:
    """Split an iEval chat log into alternating participant/bot messages."""
    raw: list[str] = []
    for line in text.replace("_x000D_", "").split("\n"):
        if line.startswith("- "):
            raw.append(line[2:].strip())
        elif raw:
            raw[-1] = (raw[-1] + "\n" + line.strip()).strip()
        elif line.strip():
            raise ValueError(f"chat log starts without '- ': {line[:60]!r}")
    return [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=m)
        for i, m in enumerate(raw)
    ]


def _winner(a: float | None, b: float | None) -> Literal["A", "B", "tie"] | None:
    if a is None or b is None:
        return None
    return "A" if a > b else "B" if b > a else "tie"


def _scenario(
    part: int, valence: str, scen: dict[str, Any], where: str, report: AdapterReport
) -> tuple[list[JudgeItem], list[Rating], list[Preference]]:
    items: list[JudgeItem] = []
    ratings: list[Rating] = []
    cluster = f"ieval:{part}"
    meta = {
        "valence": valence,
        "emotion": scen.get("emotion"),
        "ed_conv_id": scen.get("conv_id"),
        "task": part,
    }
    overall: dict[str, float | None] = {}
    texts: dict[str, str] = {}
    for bot in IEVAL_BOTS:
        if bot not in scen:
            report.unmatched.setdefault("missing bots", []).append(f"{where}.{bot}")
            continue
        b = scen[bot]
        iid = f"ieval:{part}:{valence}:{bot}"
        try:
            msgs = parse_ieval_chat_log(b["chat_log"])
        except (KeyError, ValueError) as exc:
            raise UserError(f"{where}.{bot}.chat_log: {exc}") from None
        item_meta = {**meta, "situation": scen.get("prompt"), "bot": bot}
        items.append(messages_to_item(iid, iid, msgs, f"ieval-{bot}", item_meta))
        texts[bot] = items[-1].candidate
        for code in IEVAL_STATEMENTS:
            if code not in b:
                report.unmatched.setdefault("missing scores", []).append(f"{where}.{bot}.{code}")
                continue
            value = parse_number(b[code])
            scale = (1.0, 3.0) if code == "Rating" else _LIKERT
            ratings.append(
                Rating(
                    item_id=iid,
                    rater=f"participant:{part}",
                    rater_group="participant",
                    dimension=code,
                    value=value,
                    cluster=cluster,
                    metadata={
                        "valence": valence,
                        "bot": bot,
                        "scale_min": scale[0],
                        "scale_max": scale[1],
                    },
                )
            )
        overall[bot] = parse_number(b.get("Rating"))
    prefs = []
    for a, b2 in itertools.combinations([x for x in IEVAL_BOTS if x in overall], 2):
        prefs.append(
            Preference(
                item_id=f"ieval:{part}:{valence}:{a}-{b2}",
                option_a=f"ieval-{a}",
                option_b=f"ieval-{b2}",
                text_a=texts[a],
                text_b=texts[b2],
                winner=_winner(overall[a], overall[b2]),
                rater=f"participant:{part}",
                rater_group="participant",
                question="overall_ranking",
                cluster=cluster,
                metadata={
                    **meta,
                    "item_a": f"ieval:{part}:{valence}:{a}",
                    "item_b": f"ieval:{part}:{valence}:{b2}",
                    "rating_a": overall[a],
                    "rating_b": overall[b2],
                    "texts": "last bot message of each conversation",
                },
            )
        )
    return items, ratings, prefs


def convert_ieval(src_dir: Path) -> AdapterResult:
    """Convert ``ieval_data.json``.

    Parameters
    ----------
    src_dir
        The folder holding ``ieval_data.json`` (or the file itself).

    Returns
    -------
    AdapterResult
        One conversation-level ``JudgeItem`` per bot conversation (id
        ``ieval:<task>:<valence>:<colour>``), the participant's ten scores per conversation as
        ``Rating`` records (rater ``participant:<task>``, cluster ``ieval:<task>``), and the
        ranking as a ``Preference`` for each of the six bot pairs (equal ratings: ``tie``).
    """
    path = Path(src_dir)
    if path.is_dir():
        require_dir(path, "ieval_data.json")
        path = path / "ieval_data.json"
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read JSON: {exc}") from None
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a list of tasks")
    report = AdapterReport(dataset="ieval", source=str(path))
    items: list[JudgeItem] = []
    ratings: list[Rating] = []
    prefs: list[Preference] = []
    seen_parts: set[int] = set()
    for i, task in enumerate(data):
        part = task.get("part")
        if part is None or part in seen_parts:
            raise UserError(f"{path}: $[{i}].part: missing or duplicate ({part!r})")
        seen_parts.add(part)
        for valence in _VALENCES:
            if valence not in task:
                report.unmatched.setdefault("missing scenarios", []).append(f"$[{i}].{valence}")
                continue
            it, ra, pr = _scenario(part, valence, task[valence], f"$[{i}].{valence}", report)
            items += it
            ratings += ra
            prefs += pr
    scales = {c: ((1.0, 3.0) if c == "Rating" else _LIKERT) for c in IEVAL_STATEMENTS}
    ranges, outside = value_ranges(ratings, scales)
    report.value_ranges = ranges
    report.unmatched["values outside the declared scale"] = outside
    report.unmatched.setdefault("missing bots", [])
    report.unmatched.setdefault("missing scores", [])
    report.counts.update(
        tasks=len(data),
        items=len(items),
        ratings=len(ratings),
        preferences=len(prefs),
        ties=sum(p.winner == "tie" for p in prefs),
    )
    report.notes += [
        "Likert codes: "
        + "; ".join(f"{k} = {v}" for k, v in IEVAL_STATEMENTS.items())
        + " ('^' items are reverse-worded)",
        "'_x000D_' escapes removed from chat logs; lines without '- ' continue the message",
        "'Rating' (overall, inverse rank) takes only the values 1-3 in the file: a coarse "
        "ranking of four bots with ties; declared scale 1-3",
        "bots are anonymised colours; the dataset does not say which model is which colour",
        "preference texts are each conversation's last bot message; the ranking is about the "
        "whole conversation (items hold the full conversations)",
    ]
    return AdapterResult(ratings=ratings, preferences=prefs, items=items, report=report)
