"""Small items, rubrics and judge records for the annotate tests (written into a temp dir)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from attune_judge.data import ChatMessage, JudgeItem, Judgment, write_jsonl

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> still here'

RUBRIC = """\
id: test-ratings
version: "1"
kind: reference
description: Two criteria for the annotate tests.
instructions: Rate the reply.
criteria:
  - id: warmth
    name: Warmth
    description: How warm the reply is.
    scale: {min: 1, max: 5}
    anchors: {1: Cold, 5: "Very warm <b>anchor</b>"}
  - id: fit
    name: Fit
    description: How well the reply fits.
    scale: {min: 1, max: 5}
"""


def make_items(folder: Path, n_conv: int = 3, models: tuple[str, ...] = ("m1", "m2")) -> Path:
    """One item per (conversation, model); conversation ``c0``'s ``m1`` reply is hostile."""
    items = []
    for c in range(n_conv):
        for m in models:
            reply = HOSTILE if (c, m) == (0, "m1") else f"Reply of {m} in c{c}."
            items.append(
                JudgeItem(
                    item_id=f"c{c}:1:{m}",
                    conversation_id=f"c{c}",
                    turn=1,
                    context=[ChatMessage(role="user", content=f"I feel low today (c{c}).")],
                    candidate=reply,
                    candidate_model=m,
                )
            )
    path = folder / "items.jsonl"
    write_jsonl(path, items)
    return path


def make_rubric(folder: Path) -> Path:
    path = folder / "rubric.yaml"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


def make_pairs(folder: Path, n: int = 4) -> Path:
    """Pair items (``metadata.other`` = reply B), options named ``m1`` / ``m2``."""
    from attune_judge.judges import pairwise_item

    items = [
        pairwise_item(
            f"c{c}:1:pair:m1:m2",
            f"c{c}",
            [ChatMessage(role="user", content=f"Hello c{c}")],
            f"A text {c}",
            f"B text {c}",
            option_a="m1",
            option_b="m2",
            turn=1,
        )
        for c in range(n)
    ]
    path = folder / "pairs.jsonl"
    write_jsonl(path, items)
    return path


def make_judgments(folder: Path, scores: dict[str, tuple[int, int]]) -> Path:
    """A judge's Judgment records: item → (warmth, fit)."""
    js = [
        Judgment(
            item_id=i,
            judge_id="judge-x",
            conversation_id=i.split(":")[0],
            candidate_model=i.split(":")[-1],
            scores={"warmth": w, "fit": f},
            overall=(w + f) / 2,
            normalized=((w + f) / 2 - 1) / 4,
        )
        for i, (w, f) in scores.items()
    ]
    path = folder / "judgments.jsonl"
    write_jsonl(path, js)
    return path


ATTUNEBENCH_CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")


def write_judge_run(
    run: Path, items: Iterable[JudgeItem], level: Callable[[str], float], *, overall: bool = False
) -> None:
    """A judge run folder: one ``judge-x`` judgment per item, every AttuneBench criterion at
    ``level(item_id)`` (and, with ``overall``, that level as the overall score on 1..7)."""
    run.mkdir(parents=True, exist_ok=True)
    judgments = []
    for i in items:
        v = float(level(i.item_id))
        extra = {"overall": v, "normalized": (v - 1) / 6} if overall else {}
        judgments.append(
            Judgment(
                item_id=i.item_id,
                judge_id="judge-x",
                conversation_id=i.conversation_id,
                candidate_model=i.candidate_model,
                scores=dict.fromkeys(ATTUNEBENCH_CRITERIA, v),
                **extra,
            )
        )
    write_jsonl(run / "judgments.jsonl", judgments)
