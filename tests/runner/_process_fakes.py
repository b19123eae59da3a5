"""Module-level judge factories for the process executor's tests (importable in a worker)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from attune_judge.data import JudgeItem
from tests.runner._fakes import FakeJudge


def outcome(item: JudgeItem, attempt: int) -> str:
    """Conversation c0: a rate limit on the first attempt, then ok; c1 turn 1: garbage;
    c1 turn 2: refused; c2 turn 1: a non-retryable LM error; everything else ok."""
    conv, turn = item.conversation_id, item.turn
    if conv == "c0":
        return "rate_limit" if attempt == 0 else "ok"
    if conv == "c1" and turn == 1:
        return "parse_error"
    if conv == "c1" and turn == 2:
        return "refused"
    if conv == "c2" and turn == 1:
        return "lm_error"
    return "ok"


def score(item: JudgeItem) -> float:
    """Turn / 10 for model a, turn / 20 for model b."""
    return item.turn / (10 if item.candidate_model == "a" else 20)


def scripted_judge(judge_id: str = "fake-judge", latency_s: float = 0.0) -> FakeJudge:
    """The judge of the equivalence test (same in the parent and in every worker)."""
    return FakeJudge(score, outcome=outcome, judge_id=judge_id, latency_s=latency_s)


def _crash(item: JudgeItem, attempt: int) -> str:
    if item.item_id == "c1:1:a":
        os._exit(7)  # a hard death: no exception, no cleanup
    return "ok"


def crashing_judge() -> FakeJudge:
    """Kills its worker process when it judges item ``c1:1:a``."""
    return FakeJudge(outcome=_crash, latency_s=0.01)


def broken_factory() -> FakeJudge:
    """A factory that fails in the worker."""
    raise RuntimeError("no model file here")


def double(x: int) -> int:
    """A plain picklable task function."""
    return 2 * x


def pid_of(x: int) -> int:
    """The worker's process id (to see which processes ran the tasks)."""
    return os.getpid()


def reciprocal(x: float) -> float:
    """Raises ZeroDivisionError for 0 (a bug in a task)."""
    return 1 / x


def _rate_limit_or_fail(item: JudgeItem, attempt: int) -> str:
    return "rate_limit" if item.turn == 1 else "lm_error"


def backoff_judge() -> FakeJudge:
    """Turn 1: rate-limited for ever (the runner backs off); other turns: a hard LM error."""
    return FakeJudge(outcome=_rate_limit_or_fail)


def finish_slowly(folder: str, x: int) -> int:
    """Task ``0`` returns at once; any other sleeps 3 s, then leaves the file ``folder/x``
    (proof that it ran to its end)."""
    if x:
        time.sleep(3)
        Path(folder, str(x)).write_text("finished")
    return x


def deaf_to_sigterm() -> list[FakeJudge]:
    """A worker that ignores SIGTERM (as a library's own handler may): only SIGKILL stops it."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return []


ORPHAN_SCRIPT = """
import os, signal, sys
from attune_judge.runner import ProcessExecutor
if __name__ == "__main__":
    ex = ProcessExecutor(workers=2)
    ex.start()
    print(" ".join(str(p.pid) for p in ex._procs), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""
