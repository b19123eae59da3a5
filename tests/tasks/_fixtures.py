"""A two-conversation AttuneBench data set and scripted models whose every metric is known.

Truth (both conversations have one turn):

- c1: mood tags [Afraid 6]; behaviour B1 (observed yes, preferred yes), B13 (observed no,
  preferred yes); comparisons general original-vs-human won by B (human), PW4
  alternate-vs-human won by A (alternate).
- c2: no mood tags (neutral); behaviour B1 (observed yes, preferred no); comparison general
  human-vs-original won by A (human).
- post-PANAS all 3 (totals 30 / 30), q1 ["To just listen or let me vent"], q2 "Implied or
  indirect", q3 "Mostly well-matched", four branches all 4.

Model ``alpha``: emotion "sad" (outside the vocabulary), behaviour all yes, prefers the
participant-edited reply ("HUMAN ..."), predicts the conversation answers exactly, drafts
"DRAFT-GOOD". Model ``beta``: emotion Afraid 4, behaviour all no, prefers the reply that is not
the participant-edited one, conversation answers off (below), drafts "DRAFT-BAD". The judge
rates DRAFT-GOOD 7 on every dimension and DRAFT-BAD 4, and answers "yes" to every behaviour item.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from attune_judge.data.instrument import PANAS_ITEMS, Q3_MODEL_FIT_OPTIONS
from attune_judge.testing import Messages, ScriptedEngine

WIDE = {
    "q1_lookingFor": ["To just listen or let me vent"],
    "q2_emotionClarity": "Implied or indirect",
    "q3_modelFit": "Mostly well-matched",
    "fourBranchScores": {"perceiving": 4, "facilitating": 4, "understanding": 4, "managing": 4},
}


def _conversation(cid: str, tags: list, binary: list, pairwise: list) -> dict:
    panas = dict.fromkeys(PANAS_ITEMS, 3)
    return {
        "conversationId": cid,
        "metadata": {"model": "om", "turnCount": 1},
        "prePanas": panas,
        "postPanas": panas,
        "conversationWideQuestions": WIDE,
        "turns": [
            {
                "turnNumber": 1,
                "userMessage": f"message of {cid}",
                "llmResponse": f"ORIGINAL reply of {cid}",
                "moodShiftTags": tags,
                "annotations": {
                    "binaryJudgements": binary,
                    "alternateResponses": {
                        "llmImproved": f"ALTERNATE reply of {cid}",
                        "humanEdited": f"HUMAN reply of {cid}",
                    },
                    "pairwiseComparisons": pairwise,
                },
            }
        ],
    }


def _bj(qid: str, observed: str, preferred: str) -> dict:
    return {"questionId": qid, "observedBehavior": observed, "preferredBehavior": preferred}


def _pw(qid: str, a: str, b: str, winner: str) -> dict:
    return {"questionId": qid, "responseA": a, "responseB": b, "winner": winner}


def write_data(folder: Path) -> Path:
    """Write the two conversation files into ``folder`` and return it."""
    folder.mkdir(parents=True, exist_ok=True)
    c1 = _conversation(
        "c1",
        [{"emotion": "Afraid", "intensity": 6}],
        [_bj("B1", "yes", "yes"), _bj("B13", "no", "yes")],
        [_pw("general", "original", "human", "B"), _pw("PW4", "alternate", "human", "A")],
    )
    c2 = _conversation(
        "c2", [], [_bj("B1", "yes", "no")], [_pw("general", "human", "original", "A")]
    )
    for conv in (c1, c2):
        (folder / f"conversation_{conv['conversationId']}.json").write_text(json.dumps(conv))
    return folder


def _section(text: str, name: str) -> str:
    m = re.search(rf"\[\[ ## {name} ## \]\]\n(.*?)(?=\n\n\[\[ ## |\Z)", text, re.S)
    return m.group(1) if m else ""


def _conversation_answer(good: bool) -> dict:
    if good:
        out: dict = {f"panas_{i.lower()}": 3 for i in PANAS_ITEMS}
        out.update(
            looking_for=WIDE["q1_lookingFor"],
            emotion_clarity=WIDE["q2_emotionClarity"],
            model_fit=WIDE["q3_modelFit"],
            **{f"branch_{b}": 4 for b in WIDE["fourBranchScores"]},
        )
        return out
    out = {f"panas_{i.lower()}": 5 for i in PANAS_ITEMS}
    out.update(
        looking_for=["Other"],
        emotion_clarity="Clear and explicitly stated",
        model_fit=Q3_MODEL_FIT_OPTIONS[3],
        **{f"branch_{b}": 1 for b in WIDE["fourBranchScores"]},
    )
    return out


def model_engine(good: bool) -> ScriptedEngine:
    """The scripted evaluated model ``alpha`` (good=True) or ``beta``."""

    def respond(messages: Messages) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        ids = re.findall(r"`(B\d+)_did`", system)
        if ids:
            answer = "yes" if good else "no"
            return json.dumps({f"{i}_{t}": answer for i in ids for t in ("did", "wanted")})
        if "`emotions`" in system:
            if good:
                return json.dumps({"emotions": ["sad"], "intensities": [3]})
            return json.dumps({"emotions": ["Afraid"], "intensities": [4]})
        if "`choice`" in system:
            first_is_human = _section(user, "response_1").startswith("HUMAN")
            pick_first = first_is_human if good else not first_is_human
            return json.dumps({"choice": "1" if pick_first else "2"})
        if "`looking_for`" in system:
            return json.dumps(_conversation_answer(good))
        if "`reply`" in system:
            return json.dumps({"reply": "DRAFT-GOOD" if good else "DRAFT-BAD"})
        raise AssertionError(f"unexpected request: {system[:200]}")

    return ScriptedEngine(respond, model="alpha" if good else "beta")


def judge_engine() -> ScriptedEngine:
    """The scripted drafting judge: reference scores by draft, behaviour answers all yes."""

    def respond(messages: Messages) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        if "`overall_score`" in system:
            score = 7 if "DRAFT-GOOD" in _section(user, "candidate_reply") else 4
            dims = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")
            return json.dumps({**dict.fromkeys(dims, score), "rationale": "scripted"})
        ids = re.findall(r"`(B\d+)`", system)
        if ids:
            return json.dumps(dict.fromkeys(ids, "yes"))
        raise AssertionError(f"unexpected judge request: {system[:200]}")

    return ScriptedEngine(respond, model="judge")
