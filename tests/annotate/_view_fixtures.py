"""A small run for the viewer's tests: items, judgments (ok, failed, re-judged, with score
distributions; hostile markup in every text a run carries) and people's labels."""

from __future__ import annotations

from pathlib import Path

from attune_judge.data import ChatMessage, JudgeItem, Judgment, Rating, write_jsonl

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
"""Markup that must stay text: an executed copy sets ``window.__pwned``."""

LONG_MODEL = "provider/an-unusually-long-candidate-model-name-v2-instruct-2026"


def write_view_run(folder: Path, n_conv: int = 6) -> tuple[Path, Path]:
    """Write ``folder/items.jsonl`` and ``folder/judgments.jsonl`` (two models, criteria
    ``warmth`` and ``fit`` on 1..5) and ``folder/labels.jsonl`` (two people); returns the run
    folder and the labels file.

    The judge's warmth is 5 everywhere; the people's is ``1 + c % 5`` for conversation ``c``,
    so the largest warmth disagreement is 4 (conversations 0 and 5). Conversation 1's second
    model failed (a parse error); conversation 2's first model was judged twice (a failure,
    then ok). Model ``HOSTILE`` + conversation 0 carries markup everywhere.
    """
    folder.mkdir(parents=True, exist_ok=True)
    models = (LONG_MODEL, "m2" + HOSTILE)
    items, judgments, labels = [], [], []
    for c in range(n_conv):
        for k, m in enumerate(models):
            item_id = f"c{c}:1:{k}"
            hostile = c == 0
            items.append(
                JudgeItem(
                    item_id=item_id,
                    conversation_id=f"c{c}",
                    turn=1,
                    context=[
                        ChatMessage(
                            role="user",
                            content=(HOSTILE if hostile else "") + f"I feel low (c{c}).",
                        ),
                    ],
                    candidate=(HOSTILE if hostile else "") + f"Reply of model {k} in c{c}.",
                    reference="Reference " + (HOSTILE if hostile else "") + f"c{c}",
                    candidate_model=m,
                )
            )
            base = dict(
                item_id=item_id, judge_id="judge-x", conversation_id=f"c{c}", candidate_model=m
            )
            if (c, k) == (1, 1):
                judgments.append(
                    Judgment(
                        **base,
                        status="parse_error",
                        error="no score in " + HOSTILE,
                        raw_output="garbled " + HOSTILE,
                        details={"reason": "invalid_value"},
                    )
                )
            else:
                if (c, k) == (2, 0):
                    judgments.append(Judgment(**base, status="lm_error", error="timeout"))
                fit = 1 + (c + k) % 5
                judgments.append(
                    Judgment(
                        **base,
                        scores={"warmth": 5.0, "fit": float(fit)},
                        overall=(5 + fit) / 2,
                        normalized=((5 + fit) / 2 - 1) / 4,
                        rationale=("Because " + (HOSTILE if hostile else "")) + f"reason {c}",
                        latency_s=0.5 + c / 10,
                        cost=0.001 * (c + 1),
                        details={
                            "distributions": {
                                "warmth": {
                                    "probabilities": {"4": 0.2, "5": 0.8},
                                    "expected": 4.8,
                                    "mode": 5,
                                    "entropy_bits": 0.72,
                                }
                            }
                        },
                    )
                )
            for who in ("ann" + HOSTILE if c == 0 else "ann1", "ann2"):
                labels.append(
                    Rating(
                        item_id=item_id,
                        rater=who,
                        dimension="warmth",
                        value=float(1 + c % 5),
                        cluster=f"c{c}",
                    )
                )
                labels.append(
                    Rating(
                        item_id=item_id,
                        rater=who,
                        dimension="fit",
                        value=float(1 + (c + k) % 5),
                        cluster=f"c{c}",
                    )
                )
    write_jsonl(folder / "items.jsonl", items)
    write_jsonl(folder / "judgments.jsonl", judgments)
    write_jsonl(folder / "labels.jsonl", labels)
    return folder, folder / "labels.jsonl"
