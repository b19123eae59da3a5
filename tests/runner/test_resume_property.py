"""Property: a crash at any byte of judgments.jsonl, then resume, gives every task exactly once."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from attune_judge.data import Judgment, read_jsonl
from attune_judge.runner import FailureBudget, plan_tasks, run_tasks
from tests.runner._fakes import FakeJudge, make_items

ITEMS = make_items(4, 3)  # 24 tasks


def _run(out: Path, judge: FakeJudge) -> None:
    run_tasks(
        out,
        plan_tasks(ITEMS, [judge]),
        command="test",
        arguments={},
        inputs={},
        data_fingerprint="x",
        max_concurrency=3,
        budget=FailureBudget(max_failure_rate=1.0),
        B=100,
        fsync_interval_s=None,
    )


@settings(max_examples=15, deadline=None)
@given(cut=st.floats(min_value=0.0, max_value=1.0))
def test_resume_after_a_crash_at_any_byte_never_loses_or_duplicates(cut: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        _run(out, FakeJudge())
        log = out / "judgments.jsonl"
        data = log.read_bytes()
        log.write_bytes(data[: int(cut * len(data))])  # the crash: file cut at any byte
        survived = {j.item_id for j in read_jsonl(log, Judgment, tolerate_torn_tail=True)}
        judge = FakeJudge()
        _run(out, judge)
        final = Counter(j.item_id for j in read_jsonl(log, Judgment))
        assert set(final) == {it.item_id for it in ITEMS}
        assert max(final.values()) == 1
        # exactly the judgments lost in the crash were made again, nothing else
        assert set(judge.calls) == {it.item_id for it in ITEMS} - survived
