"""Crash, flaky-provider and secret tests, through the real DSPy path (judge + scripted engine)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.data import Judgment, read_jsonl
from attune_judge.report import write_report
from attune_judge.runner import ScoreConfig, run_score
from attune_judge.testing import ScriptedEngine, rate_limit_error
from tests.conftest import REPO_ROOT
from tests.runner._real import (
    CRITERIA,
    candidate_number,
    reference_judge,
    score_of,
    scripted_answer,
    write_items,
)


def _spawn(items: Path, out: Path, report: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with report.with_suffix(".stderr").open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.runner._slow_run", str(items), str(out), str(report)],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


def _n_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", n_conv=10, n_turns=4)  # 80 items
    out = tmp_path / "run"
    path = os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "src")])
    env = {**os.environ, "ATTUNE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": path}
    proc = _spawn(tmp_path / "items.jsonl", out, tmp_path / "first.json", env)
    deadline = time.monotonic() + 60
    while _n_lines(out / "judgments.jsonl") < 12:
        assert proc.poll() is None, (tmp_path / "first.stderr").read_text()
        assert time.monotonic() < deadline, "the run never wrote 12 judgments"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (tmp_path / "first.json").exists()  # it really died mid-run

    before = read_jsonl(out / "judgments.jsonl", Judgment, tolerate_torn_tail=True)
    done_before = {j.item_id: j for j in before}
    assert 12 <= len(done_before) < len(items)
    assert len(done_before) == len(before)

    proc = _spawn(tmp_path / "items.jsonl", out, tmp_path / "second.json", env)
    proc.wait(timeout=120)
    assert proc.returncode == 0, (tmp_path / "second.stderr").read_text()
    report = json.loads((tmp_path / "second.json").read_text())

    after = read_jsonl(out / "judgments.jsonl", Judgment)  # strict: no torn line left behind
    counts = Counter(j.item_id for j in after)
    assert set(counts) == {it.item_id for it in items}  # nothing lost
    assert max(counts.values()) == 1  # nothing duplicated
    by_id = {j.item_id: j for j in after}
    for item_id, j in done_before.items():  # completed judgments kept as they were
        assert by_id[item_id].model_dump() == j.model_dump()
    number_of = {it.item_id: int(it.candidate.split("-")[1]) for it in items}
    finished_numbers = {number_of[i] for i in done_before}
    # no finished item was asked again; the engine was asked at most once per remaining item
    # (fewer when a call that finished just before the kill is answered from DSPy's disk cache)
    assert not finished_numbers & set(report["asked"])
    assert report["calls"] == len(report["asked"]) <= len(items) - len(done_before)
    assert report["n_run"] == len(items) - len(done_before)
    # every judgment's scores are the scripted ones (resumed work is real work, not defaults)
    for it in items:
        assert by_id[it.item_id].scores == dict.fromkeys(
            CRITERIA, float(score_of(number_of[it.item_id]))
        )


class _FlakyProvider:
    """30% of calls raise a rate limit, 10% return garbage, the rest a valid verdict.

    Keeps, per candidate, the outcome of its last call: the status its judgment must end with.
    """

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.last: dict[int, str] = {}
        self.history: dict[int, list[str]] = {}
        self.outcomes: Counter[str] = Counter()
        self._pending: dict[int, str] = {}

    def _draw(self, n: int) -> str:
        with self._lock:
            u = self._rng.random()
            outcome = "rate_limit" if u < 0.3 else "garbage" if u < 0.4 else "ok"
            self.last[n] = outcome
            self.history.setdefault(n, []).append(outcome)
            self.outcomes[outcome] += 1
            self._pending[threading.get_ident()] = outcome
            return outcome

    def fail(self, messages: list[dict[str, str]]) -> BaseException | None:
        outcome = self._draw(candidate_number(messages))
        return rate_limit_error() if outcome == "rate_limit" else None

    def answer(self, messages: list[dict[str, str]]) -> str:
        with self._lock:
            outcome = self._pending.pop(threading.get_ident())
        return "I'd rather not say {not json" if outcome == "garbage" else scripted_answer(messages)


def test_flaky_provider_run_completes_and_counts_every_failure_honestly(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", n_conv=20, n_turns=5)  # 200 items
    provider = _FlakyProvider(seed=7)
    engine = ScriptedEngine(provider.answer, fail=provider.fail)
    judge = reference_judge(engine)  # cache off: every attempt reaches the engine
    config = ScoreConfig(
        data=tmp_path / "items.jsonl",
        out=tmp_path / "run",
        lm="scripted/judge",
        max_concurrency=4,
        max_retries=2,
        retry_base_delay_s=0.001,
        max_failure_rate=0.5,
        quiet=True,
        B=500,
    )
    result = run_score(config, judges=[judge])
    assert result.stopped is None and result.complete

    # the engine's own record of what happened, independent of the runner's accounting
    number_of = {it.item_id: int(it.candidate.split("-")[1]) for it in items}
    expected = {
        i: {"rate_limit": "lm_error", "garbage": "parse_error", "ok": "ok"}[provider.last[n]]
        for i, n in number_of.items()
    }
    judgments = {j.item_id: j for j in read_jsonl(tmp_path / "run" / "judgments.jsonl", Judgment)}
    assert len(judgments) == 200
    assert {i: j.status for i, j in judgments.items()} == expected
    # rate limits were retried: 1 call per item plus one per retry
    assert engine.calls == sum(provider.outcomes.values())
    assert engine.calls == 200 + sum(j.details["attempts"] - 1 for j in judgments.values())
    assert provider.outcomes["rate_limit"] > 0 and provider.outcomes["garbage"] > 0
    for i, j in judgments.items():
        history = provider.history[number_of[i]]
        assert j.details["attempts"] == len(history)
        # rate limits were retried up to max_retries times, garbage once (parse_retries=1)
        assert all(h in ("rate_limit", "garbage") for h in history[:-1])
        assert history.count("garbage") <= 2 and history.count("rate_limit") <= 3
        if j.status == "parse_error":
            assert j.raw_output is not None and "not json" in j.raw_output
            assert history.count("garbage") == 2  # the first garbage answer was asked again
        if j.status == "lm_error":
            assert history.count("rate_limit") == 3 and j.details["retryable"] is True

    want = Counter(expected.values())
    # the status branches above ran: some items ended in each final status
    assert set(want) == {"ok", "parse_error", "lm_error"}
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    counted: Counter[str] = Counter()
    for block in summary["judges"].values():
        for m in block["models"].values():
            counted.update({k: v for k, v in m["n_by_status"].items() if v})
            assert m["score"]["n"] == m["n_ok"]  # the mean's n is the ok count, nothing else
    assert counted == want
    assert summary["run"]["n_by_status"]["missing"] == 0
    # the mean is over ok judgments only: (score - 1) / 6 of the scripted scores
    for model in ("a", "b"):
        oks = [
            (score_of(number_of[i]) - 1) / 6
            for i, j in judgments.items()
            if j.status == "ok" and j.candidate_model == model
        ]
        block = next(iter(summary["judges"].values()))["models"][model]
        assert block["score"]["mean"] == pytest.approx(sum(oks) / len(oks))


def test_no_api_key_value_in_any_file_of_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-9f8e7d6c5b4a"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    write_items(tmp_path / "items.jsonl", n_conv=3, n_turns=2)
    calls = {"n": 0}

    def leaky(messages: list[dict[str, str]]) -> BaseException | None:
        # a provider that echoes the key in its error, as some do for a rejected key
        calls["n"] += 1
        if calls["n"] % 2:
            return RuntimeError(f"401 Incorrect API key provided: {secret}")
        return None

    judge = reference_judge(ScriptedEngine(scripted_answer, fail=leaky))
    config = ScoreConfig(
        data=tmp_path / "items.jsonl",
        out=tmp_path / "run",
        lm="scripted/judge",
        max_failure_rate=1.0,
        quiet=True,
        B=200,
    )
    result = run_score(config, judges=[judge])
    assert result.n_by_status.get("lm_error", 0) > 0  # the leaky errors were recorded ...
    write_report(result.run_dir)  # what `attune-judge score` writes after the run
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {
        "manifest.json",
        "judgments.jsonl",
        "summary.json",
        "report.md",
        "report.html",
    }
    for path in files:
        assert secret.encode() not in path.read_bytes(), path  # ... without the key
    assert "Incorrect API key provided: ***" in (tmp_path / "run" / "judgments.jsonl").read_text()
