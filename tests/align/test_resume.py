"""A killed ``align`` run, re-run, pays only for the calls it had not made: DSPy's request cache
(under ``ATTUNE_CACHE_DIR``, which ``align_judge`` configures like ``score``) answers the rest.

The kill is a ``KeyboardInterrupt`` raised by the model from its N-th answer on (as Ctrl-C or a
lost process would stop the run there); DSPy caches only answers it received.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from attune_judge.align import AlignConfig, OptimizerSettings, align_judge
from attune_judge.testing import ScriptedEngine
from tests.align._engine import learner, write_labels


class _Killed(KeyboardInterrupt):
    pass


def _config(root: Path, out: str) -> AlignConfig:
    items, ratings = write_labels(root, conversations=12)
    return AlignConfig(
        labels=str(ratings),
        items=items,
        rubric="empathic-communication-epitome",
        out=root / out,
        optimizer=OptimizerSettings(
            name="bootstrap-fewshot", max_labeled_demos=4, num_candidates=1
        ),
        max_concurrency=1,
        B=200,
        lm="scripted/judge",
    )


def test_a_killed_align_rerun_pays_only_for_the_calls_it_had_not_made(tmp_path: Path) -> None:
    # a model name of its own: no other test's cached answers can serve this one
    model = f"scripted/resume-{uuid.uuid4().hex[:8]}"
    clean = ScriptedEngine(learner)
    first = align_judge(_config(tmp_path, "clean"), lm=clean.lm(model), echo=lambda s: None)
    total = clean.calls  # an uncached run, for reference
    n_before = len(first.split.items["test"])
    answered = [0]
    kill_at = total // 2  # inside the optimizer (after the held-out "before" judgments)

    def dying(messages: list[dict[str, str]]) -> str:
        if answered[0] >= kill_at:
            raise _Killed()
        answered[0] += 1
        return learner(messages)

    killed = ScriptedEngine(dying)
    with pytest.raises(KeyboardInterrupt):
        align_judge(_config(tmp_path, "a"), lm=killed.lm(model, cache=True), echo=lambda s: None)
    assert answered[0] == kill_at and n_before < kill_at < n_before + first.optimizer_calls
    # nothing half-written to refuse the re-run: at most the optimizer's log (align.log)
    out = tmp_path / "a"
    assert not out.exists() or [p.name for p in out.iterdir()] == ["align.log"]
    rerun = ScriptedEngine(learner)
    res = align_judge(_config(tmp_path, "a"), lm=rerun.lm(model, cache=True), echo=lambda s: None)
    assert rerun.calls == total - kill_at
    assert res.proof.after == first.proof.after and res.demo_item_ids == first.demo_item_ids
    again = ScriptedEngine(learner)
    align_judge(_config(tmp_path, "b"), lm=again.lm(model, cache=True), echo=lambda s: None)
    assert again.calls == 0
