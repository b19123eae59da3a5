"""A small fake Judge (no LM) and item factories for the runner's unit tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from attune_judge.data import ChatMessage, JudgeItem, Judgment


def make_items(n_conv: int, n_turns: int, models: tuple[str, ...] = ("a", "b")) -> list[JudgeItem]:
    """Items ``c{i}:{t}:{model}`` with the candidate text ``{model}-{i}-{t}``."""
    return [
        JudgeItem(
            item_id=f"c{i}:{t}:{m}",
            conversation_id=f"c{i}",
            turn=t,
            context=[ChatMessage(role="user", content=f"message {i}-{t}")],
            candidate=f"{m}-{i}-{t}",
            candidate_model=m,
            reference="ref",
        )
        for m in models
        for i in range(n_conv)
        for t in range(1, n_turns + 1)
    ]


class FakeJudge:
    """Scores with ``score(item)`` (a value in [0, 1]) or fails per ``outcome(item, attempt)``.

    ``outcome`` returns ``"ok"``, ``"rate_limit"`` (retryable lm_error), ``"lm_error"``
    (not retryable), ``"parse_error"`` or ``"refused"``. Calls are counted per item, thread-safely.
    """

    def __init__(
        self,
        score: Callable[[JudgeItem], float] = lambda item: 0.5,
        *,
        outcome: Callable[[JudgeItem, int], str] | None = None,
        judge_id: str = "fake-judge",
        latency_s: float = 0.0,
    ) -> None:
        self.judge_id = judge_id
        self.spec: dict[str, Any] = {"program": "fake", "version": 1, "lm": "none"}
        self._score = score
        self._outcome = outcome
        self._latency_s = latency_s
        self._lock = threading.Lock()
        self.calls: dict[str, int] = {}

    @property
    def n_calls(self) -> int:
        return sum(self.calls.values())

    def judge(self, item: JudgeItem) -> Judgment:
        with self._lock:
            attempt = self.calls.get(item.item_id, 0)
            self.calls[item.item_id] = attempt + 1
        if self._latency_s:
            time.sleep(self._latency_s)
        outcome = self._outcome(item, attempt) if self._outcome else "ok"
        base: dict[str, Any] = {"item_id": item.item_id, "judge_id": self.judge_id}
        if outcome == "rate_limit":
            return Judgment(**base, status="lm_error", error="429", details={"retryable": True})
        if outcome == "lm_error":
            return Judgment(**base, status="lm_error", error="400 bad request")
        if outcome == "refused":
            return Judgment(**base, status="refused", error="no reference")
        if outcome == "parse_error":
            return Judgment(**base, status="parse_error", raw_output="garbage")
        value = self._score(item)
        return Judgment(
            **base,
            scores={"overall_score": 1 + 6 * value},
            overall=1 + 6 * value,
            normalized=value,
        )
