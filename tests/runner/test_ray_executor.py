"""The Ray executor on a real local Ray cluster (one per session: see ``ray_cluster``).

Same results as threads, keys from the node's environment (never shipped), a dead actor is
an error instead of a hang, and the commands run on it.
"""

from __future__ import annotations

import json
import pickle
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import ChatMessage, JudgeItem, read_jsonl, write_jsonl
from attune_judge.data import Judgment as JudgmentRecord
from attune_judge.errors import UserError
from attune_judge.lm import LMSettings
from attune_judge.runner import (
    FailureBudget,
    JudgeFactory,
    RayExecutor,
    RetryPolicy,
    ScoreConfig,
    ThreadExecutor,
    plan_tasks,
    run_score,
    run_tasks,
)

# private unit: the Ray executor's task references and worker errors
from attune_judge.runner._executor import JudgeTaskFn
from attune_judge.runner._process import WorkerError, _TaskRef
from attune_judge.runner._score import build_score_judge
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.conftest import NODE_KEY
from tests.runner import _process_fakes as pf
from tests.runner._fakes import FakeJudge, make_items

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

CRITERIA = ("overall_score", "emotional_appropriateness", "helpfulness", "tone_match")


def answer(messages: list[dict[str, Any]]) -> str:
    """A valid reference-rubric answer whose scores depend on the candidate's text."""
    n = sum(map(ord, messages[-1]["content"]))
    return json.dumps({**dict.fromkeys(CRITERIA, 1 + n % 7), "rationale": "fake"})


def judge_items(path: Path, n: int) -> Path:
    """``n`` JudgeItems with a fresh token (so no earlier run's cache answers them)."""
    token = uuid.uuid4().hex[:8]
    write_jsonl(
        path,
        [
            JudgeItem(
                item_id=f"i{k}",
                conversation_id=f"c{k // 2}",
                turn=1 + k % 2,
                context=[ChatMessage(role="user", content=f"I feel low today ({token} {k}).")],
                candidate=f"That sounds hard. Tell me more ({k}).",
                candidate_model="m" if k % 3 else "n",
                reference="I'm sorry. Do you want to talk about it?",
            )
            for k in range(n)
        ],
    )
    return path


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _run(out: Path, executor: Any) -> dict[tuple[str, str], tuple]:
    tasks = plan_tasks(make_items(5, 4), [pf.scripted_judge()])
    result = run_tasks(
        out,
        tasks,
        command="test",
        arguments={},
        inputs={},
        data_fingerprint="fp",
        executor=executor,
        retry=RetryPolicy(base_delay_s=0.0, seed=0),
        budget=FailureBudget(max_failure_rate=1.0),
        B=200,
    )
    assert result.n_run == 40
    lines = read_jsonl(out / "judgments.jsonl", JudgmentRecord)
    assert len({(j.item_id, j.judge_id) for j in lines}) == len(lines) == 40
    return {
        (j.item_id, j.judge_id): (j.status, j.normalized, j.details.get("attempts")) for j in lines
    }


def test_same_results_as_threads_and_actors_are_reused(ray_cluster: Any, tmp_path: Path) -> None:
    threaded = _run(tmp_path / "t", ThreadExecutor(4))
    with RayExecutor(JudgeFactory(pf.scripted_judge), workers=2, max_concurrency=5) as ex:
        assert ex.threads_per_worker == 3
        rayed = _run(tmp_path / "r", ex)
        actors = list(ex._actors)
        assert sorted(ex.map_unordered(pf.double, range(20))) == [2 * x for x in range(20)]
        assert ex._actors == actors  # the same actors ran the second map
        pids = set(ex.map_unordered(pf.pid_of, range(40)))
        assert len(pids) == 2 and len(pids & {__import__("os").getpid()}) == 0
    assert rayed == threaded
    # by hand (see _process_fakes.outcome): 34 ok, 2 each of the failures, c0 retried once,
    # the parse errors of c1:1 asked once more (parse_retries=1)
    assert Counter(s for s, _, _ in rayed.values()) == {
        "ok": 34,
        "parse_error": 2,
        "refused": 2,
        "lm_error": 2,
    }
    assert {k[0] for k, v in rayed.items() if v[2] == 2} == {
        f"c0:{t}:{m}" for t in range(1, 5) for m in "ab"
    } | {"c1:1:a", "c1:1:b"}
    assert ray_cluster.is_initialized()  # a joined cluster is left running


def test_cli_score_on_ray_keys_come_from_the_node_and_judgments_match_threads(
    ray_cluster: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the driver has another key: if anything shipped the driver's key, the server would see it
    monkeypatch.setenv("OPENAI_API_KEY", "sk-driver-secret-9876")
    data = judge_items(tmp_path / "items.jsonl", 12)
    with FakeBatchServer(answer) as server:
        argv = ["score", str(data), "-o", str(tmp_path / "ray"), "--lm", "openai/fake-judge"]
        argv += ["--api-base", server.base_url, "--executor", "ray", "--workers", "2", "-q"]
        assert _cli(argv) == 0
        assert "12 tasks, 0 already done, 12 judged now" in capsys.readouterr().out
        assert server.chat_calls == 12
        assert set(server.authorizations) == {f"Bearer {NODE_KEY}"}
        # resume: nothing left to do (no actor is started for nothing)
        assert _cli(argv) == 0
        assert "12 tasks, 12 already done, 0 judged now" in capsys.readouterr().out
        # what crosses the wire: the factory and (item, judge id); no key anywhere
        config = ScoreConfig(
            data=data,
            out=tmp_path / "thr",
            lm="openai/fake-judge",
            quiet=True,
            B=200,
            lm_settings=LMSettings(api_base=server.base_url),
        )
        judge = build_score_judge(config)
        blobs = [
            pickle.dumps(JudgeFactory(build_score_judge, (config,))),
            pickle.dumps(JudgeTaskFn(RetryPolicy())),
            *(
                pickle.dumps(_TaskRef(t.item, t.judge.judge_id))
                for t in plan_tasks(read_jsonl(data, JudgeItem), [judge])
            ),
        ]
        assert not any(b"sk-driver-secret" in b or NODE_KEY.encode() in b for b in blobs)
        # the same run on threads, with a fresh DSPy cache: the server answers it again
        monkeypatch.setenv("ATTUNE_CACHE_DIR", str(tmp_path / "cache"))
        threads = run_score(config)
        assert threads.n_by_status == {"ok": 12}
        assert server.chat_calls == 24
        close_http_clients()
    ray_lines = read_jsonl(tmp_path / "ray" / "judgments.jsonl", JudgmentRecord)
    thread_lines = read_jsonl(tmp_path / "thr" / "judgments.jsonl", JudgmentRecord)
    assert {(j.item_id, j.judge_id, tuple(sorted(j.scores.items()))) for j in ray_lines} == {
        (j.item_id, j.judge_id, tuple(sorted(j.scores.items()))) for j in thread_lines
    }
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["arguments"]["executor"] == "ray"
    assert manifest["invocations"] == 2


def test_a_dead_actor_raises_and_a_missing_node_key_is_a_user_error(
    ray_cluster: Any, tmp_path: Path
) -> None:
    judge = FakeJudge()
    tasks = plan_tasks(make_items(3, 2), [judge])
    ex = RayExecutor(JudgeFactory(pf.crashing_judge), workers=2, max_concurrency=4)
    with pytest.raises(WorkerError, match=r"Ray worker died"):
        list(ex.map_unordered(JudgeTaskFn(RetryPolicy(max_retries=0)), tasks))
    assert ex._actors == []
    assert sorted(ex.map_unordered(pf.double, range(3))) == [0, 2, 4]  # fresh actors
    ex.close()
    # a model whose key the nodes lack: the worker's UserError names the variable
    config = ScoreConfig(data=tmp_path, out=tmp_path / "o", lm="anthropic/claude-x")
    with (
        RayExecutor(JudgeFactory(build_score_judge, (config,)), workers=1) as ex2,
        pytest.raises(UserError, match=r"Ray worker .* ANTHROPIC_API_KEY"),
    ):
        ex2.start()


def test_chunk_size_follows_the_time_per_task_the_concurrency_and_the_tasks_left() -> None:
    ex = RayExecutor(workers=2, max_concurrency=32)
    assert ex.next_chunk_size(1000) == 1  # nothing measured yet
    ex._task_s = 0.04  # a fast server: 32 tasks of ~1 ms CPU share one actor's core
    assert ex.next_chunk_size() == 40  # ceil(32 / (20 * 0.04))
    assert ex.next_chunk_size(100) == 4  # an even share of 100 tasks over 32 slots
    assert ex.next_chunk_size(5) == 1
    ex._task_s = 0.5
    assert ex.next_chunk_size(10_000) == 4  # ceil(32 / (20 * 0.5)) = ceil(3.2)
    ex._task_s = 1e-6  # at most MAX_CHUNK
    assert ex.next_chunk_size() == 64
    fixed = RayExecutor(workers=1, max_concurrency=4, chunk_size=7)
    fixed._task_s = 0.5
    assert fixed.next_chunk_size(3) == 7
    with pytest.raises(ValueError, match="chunk_size"):
        RayExecutor(chunk_size=0)


def _sleep_then_echo(task: tuple[str, float]) -> str:
    import time

    time.sleep(task[1])
    return task[0]


def test_an_actor_streams_what_finished_within_the_flush_interval_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from attune_judge.runner import _ray

    monkeypatch.setattr(_ray, "FLUSH_S", 0.05)
    worker = _ray._Worker(pickle.dumps(None))
    worker.set_fn(pickle.dumps(_sleep_then_echo))

    def batches(tasks: list[tuple[str, float]]) -> list[list[str]]:
        out = []
        for batch in worker.run_chunk([pickle.dumps(t) for t in tasks]):
            out.append([pickle.loads(b)[1] for b in batch])
        return out

    # fast tasks go out together; a task slower than the interval goes out at once
    assert batches([("a", 0), ("b", 0), ("c", 0)]) == [["a", "b", "c"]]
    assert batches([("a", 0.06), ("b", 0.06), ("c", 0)]) == [["a"], ["b"], ["c"]]
    assert batches([("a", 0), ("b", 0.06), ("c", 0), ("d", 0)]) == [["a", "b"], ["c", "d"]]

    # once the parent asked to stop, what finished is still sent and nothing new starts
    def stop_after_first(task: tuple[str, float]) -> str:
        worker.set_cancel()
        return task[0]

    worker.fn = stop_after_first
    assert batches([("a", 0), ("b", 0)]) == [["a"]]
