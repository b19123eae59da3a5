"""The process executor: same results as the thread executor, clean shutdown, crashes surface."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from attune_judge.data import Judgment as JudgmentRecord
from attune_judge.data import read_jsonl
from attune_judge.runner import (
    FailureBudget,
    JudgeFactory,
    ProcessExecutor,
    RetryPolicy,
    ScoreConfig,
    ThreadExecutor,
    plan_tasks,
    run_score,
    run_tasks,
)

# private unit: the process executor's worker errors and task function
from attune_judge.runner._executor import JudgeTaskFn
from attune_judge.runner._process import WorkerError
from tests.conftest import REPO_ROOT, SAMPLES
from tests.runner import _process_fakes as pf
from tests.runner._fakes import FakeJudge, make_items

pytestmark = pytest.mark.timeout(60)


def _run(out: Path, executor: ThreadExecutor | ProcessExecutor) -> dict[tuple[str, str], tuple]:
    items = make_items(5, 4)  # 5 conversations x 4 turns x models a, b = 40 items
    tasks = plan_tasks(items, [pf.scripted_judge()])
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
    keys = [(j.item_id, j.judge_id) for j in lines]
    assert len(keys) == 40 and len(set(keys)) == 40  # every task exactly once
    return {
        (j.item_id, j.judge_id): (j.status, j.normalized, j.details.get("attempts")) for j in lines
    }


def test_same_results_as_the_thread_executor(tmp_path: Path) -> None:
    threaded = _run(tmp_path / "t", ThreadExecutor(4))
    with ProcessExecutor(JudgeFactory(pf.scripted_judge), workers=2, max_concurrency=4) as ex:
        processed = _run(tmp_path / "p", ex)
    assert processed == threaded
    # by hand (see _process_fakes.outcome): c1:1 and c1:2 and c2:1 fail or refuse for both
    # models (2 each), the other 34 are ok; the 8 items of c0 needed 2 attempts (one retry),
    # and the parse errors of c1:1 were asked once more (parse_retries=1) before being final
    statuses = Counter(s for s, _, _ in processed.values())
    assert statuses == {"ok": 34, "parse_error": 2, "refused": 2, "lm_error": 2}
    retried = {k[0] for k, v in processed.items() if v[2] == 2}
    assert retried == {f"c0:{t}:{m}" for t in range(1, 5) for m in "ab"} | {"c1:1:a", "c1:1:b"}
    # score: turn / 10 for model a, turn / 20 for model b
    assert processed[("c3:4:a", "fake-judge")] == ("ok", pytest.approx(0.4), 1)
    assert processed[("c3:4:b", "fake-judge")] == ("ok", pytest.approx(0.2), 1)


def test_workers_split_the_concurrency_and_are_reused_then_closed() -> None:
    ex = ProcessExecutor(workers=2, max_concurrency=5)
    assert ex.threads_per_worker == 3  # ceil(5 / 2)
    assert sorted(ex.map_unordered(pf.double, range(30))) == [2 * x for x in range(30)]
    procs = list(ex._procs)
    assert len(procs) == 2 and all(p.is_alive() for p in procs)
    pids = set(ex.map_unordered(pf.pid_of, range(40)))
    assert pids <= {p.pid for p in procs}  # the same workers ran the second map
    ex.close()
    assert all(not p.is_alive() and p.exitcode == 0 for p in procs)  # a clean exit
    ex.close()  # idempotent


def test_stop_sends_no_new_task_but_yields_the_running_ones() -> None:
    stop = threading.Event()
    got: list[int] = []
    with ProcessExecutor(workers=2, max_concurrency=4) as ex:
        for x in ex.map_unordered(pf.double, range(1000), stop=stop):
            got.append(x)
            if len(got) == 3:
                stop.set()
    # at most 4 tasks were in flight when stop was set
    assert 3 <= len(got) <= 3 + 4
    assert len(set(got)) == len(got)


def test_a_worker_that_dies_raises_instead_of_hanging() -> None:
    judge = FakeJudge()  # the parent's twin: only its judge_id ("fake-judge") matters
    tasks = plan_tasks(make_items(3, 2), [judge])
    ex = ProcessExecutor(JudgeFactory(pf.crashing_judge), workers=2, max_concurrency=4)
    with pytest.raises(WorkerError, match=r"died with exit code 7"):
        list(ex.map_unordered(JudgeTaskFn(RetryPolicy(max_retries=0)), tasks))
    assert ex._procs == []  # every worker was terminated
    # the executor starts fresh workers for the next map
    assert sorted(ex.map_unordered(pf.double, range(3))) == [0, 2, 4]
    ex.close()


def test_a_failing_factory_and_a_foreign_judge_are_clear_errors() -> None:
    ex = ProcessExecutor(JudgeFactory(pf.broken_factory), workers=1)
    with pytest.raises(WorkerError, match=r"(?s)could not build its judges.*no model file here"):
        ex.start()
    tasks = plan_tasks(make_items(1, 1), [FakeJudge(judge_id="other")])
    with (
        ProcessExecutor(JudgeFactory(pf.scripted_judge), workers=1) as ex2,
        pytest.raises(WorkerError, match="did not build judge 'other'"),
    ):
        list(ex2.map_unordered(JudgeTaskFn(RetryPolicy()), tasks))


def test_a_task_that_raises_and_unpicklable_inputs_are_errors() -> None:
    with ProcessExecutor(workers=1) as ex:
        with pytest.raises(WorkerError, match="ZeroDivisionError"):
            list(ex.map_unordered(pf.reciprocal, [1.0, 0.0, 2.0]))
        with pytest.raises(ValueError, match="cannot be sent"):
            list(ex.map_unordered(lambda x: x, range(3)))
    with pytest.raises(ValueError, match="cannot be sent"):
        ProcessExecutor(JudgeFactory(lambda: FakeJudge()))


def test_run_score_refuses_process_config_with_own_judges(tmp_path: Path) -> None:
    config = ScoreConfig(data=SAMPLES, out=tmp_path / "r", executor="process")
    with pytest.raises(ValueError, match="JudgeFactory"):
        run_score(config, judges=[FakeJudge()])


def test_stop_reaches_the_workers_backoff(tmp_path: Path) -> None:
    # plan order: c0:1:a (rate-limited for ever), c0:2:a (hard error), c1:1:a, c1:2:a, ...
    # the two hard errors exceed the budget (2 of 2 failed) and stop the run; without the stop
    # reaching the workers the two rate-limited tasks would back off 5 times:
    # >= 0.5/2 + 1/2 + 2/2 + 4/2 + 8/2 = 7.75 s; with it they give up after the first backoff
    # (<= 0.5 s). Asserted as attempts, not seconds: a wall-clock bound fails on a loaded machine
    tasks = plan_tasks(make_items(5, 2, models=("a",)), [FakeJudge()])
    with ProcessExecutor(JudgeFactory(pf.backoff_judge), workers=2, max_concurrency=4) as ex:
        ex.start()
        result = run_tasks(
            tmp_path / "r",
            tasks,
            command="test",
            arguments={},
            inputs={},
            data_fingerprint="fp",
            executor=ex,
            retry=RetryPolicy(max_retries=5, base_delay_s=0.5, seed=0),
            budget=FailureBudget(max_failure_rate=0.1, min_attempts=2),
            B=200,
        )
    assert result.stopped and "failure budget" in result.stopped
    lines = read_jsonl(tmp_path / "r" / "judgments.jsonl", JudgmentRecord)
    attempts = {j.item_id: j.details["attempts"] for j in lines if j.item_id.endswith(":1:a")}
    assert attempts and all(a <= 3 for a in attempts.values())


def test_workers_do_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    script = tmp_path / "orphan.py"
    script.write_text(pf.ORPHAN_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == -signal.SIGKILL
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in pids if _alive(p)]
    assert alive == []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by init) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_score_cli_with_the_process_executor_matches_threads(tmp_path: Path) -> None:
    from attune_judge.cli import main

    def score(run: Path, *extra: str) -> dict[str, tuple]:
        argv = ["score", str(SAMPLES), "--rubric", "lexical", "-o", str(run), "--quiet", *extra]
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert not stop.value.code
        lines = read_jsonl(run / "judgments.jsonl", JudgmentRecord)
        return {j.item_id: (j.judge_id, j.status, j.normalized) for j in lines}

    threaded = score(tmp_path / "t")
    processed = score(tmp_path / "p", "--executor", "process", "--workers", "2")
    # 19 annotated turns x 3 pseudo-models, each exactly once, same judge and scores
    assert len(processed) == 57 and processed == threaded
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert manifest["arguments"]["executor"] == "process"
    assert manifest["arguments"]["workers"] == 2
    before = (tmp_path / "p" / "judgments.jsonl").read_bytes()
    score(tmp_path / "p", "--executor", "process")  # resume: a no-op
    assert (tmp_path / "p" / "judgments.jsonl").read_bytes() == before


def test_closing_during_an_open_map_terminates_instead_of_finishing_in_flight_tasks(
    tmp_path: Path,
) -> None:
    # Ctrl-C while the runner writes a judgment: the interrupt is raised in the consumer, the
    # map's generator stays open (the traceback holds it) and the runner's `with` block closes
    # the executor. Nobody will read the in-flight results, so the workers are terminated,
    # not asked to finish them (which took up to the tasks' whole duration, per worker).
    ex = ProcessExecutor(workers=2, max_concurrency=4)
    results = ex.map_unordered(partial(pf.finish_slowly, str(tmp_path)), range(100))
    assert next(results) == 0  # tasks 1, 2, 3 are in flight (3 s each)
    procs = list(ex._procs)
    ex.close()
    assert [p.exitcode for p in procs] == [-signal.SIGTERM] * 2  # terminated, not a clean 0
    assert list(tmp_path.iterdir()) == []  # no in-flight task ran to its end
    # the abandoned generator, closed late, leaves the next map's workers alone
    assert sorted(ex.map_unordered(pf.double, range(3))) == [0, 2, 4]
    fresh = list(ex._procs)
    results.close()
    assert ex._procs == fresh and all(p.is_alive() for p in fresh)
    ex.close()
    assert [p.exitcode for p in fresh] == [0, 0]  # after a finished map: a clean stop


class _Recorded:
    """A worker process whose terminate and kill calls go to a shared log."""

    def __init__(self, proc: Any, wid: int, log: list[tuple[str, Any]]) -> None:
        self._proc, self._wid, self._log = proc, wid, log

    def terminate(self) -> None:
        self._log.append(("terminate", self._wid))
        self._proc.terminate()

    def kill(self) -> None:
        self._log.append(("kill", self._wid))
        self._proc.kill()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._proc, name)


def test_stopping_signals_every_worker_at_once_against_one_shared_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # three workers that ignore SIGTERM: before, each was joined for up to 5 s in turn (15 s)
    # before any was killed; now all get SIGTERM in one pass, one wait covers all three until
    # one shared deadline, then all get SIGKILL, then one more shared wait
    from attune_judge.runner import _process

    grace = 0.3
    monkeypatch.setattr(_process, "_TERM_GRACE_S", grace)
    log: list[tuple[str, Any]] = []
    real_wait = _process.mp_connection.wait

    def wait(objects: list[Any], timeout: float | None = None) -> list[Any]:
        log.append(("wait", (len(objects), timeout)))
        return real_wait(objects, timeout)

    ex = ProcessExecutor(JudgeFactory(pf.deaf_to_sigterm), workers=3)
    ex.start()
    monkeypatch.setattr(_process.mp_connection, "wait", wait)  # the queues use it too
    procs = list(ex._procs)
    ex._procs = [_Recorded(p, wid, log) for wid, p in enumerate(procs)]
    ex._terminate()
    kinds = [kind for kind, _ in log]
    first_kill = kinds.index("kill")
    assert log[:3] == [("terminate", 0), ("terminate", 1), ("terminate", 2)]
    assert sorted(log[first_kill : first_kill + 3]) == [("kill", 0), ("kill", 1), ("kill", 2)]
    before_kill = [arg for kind, arg in log[3:first_kill]]
    after_kill = [arg for kind, arg in log[first_kill + 3 :]]
    assert all(kind == "wait" for kind, _ in log[3:first_kill] + log[first_kill + 3 :])
    # each phase: waits on every worker still alive at once, with what is left of one deadline
    # (after SIGKILL a worker may be gone before the first wait: on a loaded machine 2 of 3
    # were still alive, and all 3 may be)
    assert before_kill and before_kill[0][0] == 3  # they ignore SIGTERM: all 3 alive
    assert all(n <= 3 for n, _ in after_kill)
    assert [n for n, _ in after_kill] == sorted((n for n, _ in after_kill), reverse=True)
    for waits in (before_kill, after_kill):
        timeouts = [t for _, t in waits]
        assert all(0 < t <= grace for t in timeouts)
        assert timeouts == sorted(timeouts, reverse=True)
    assert [p.exitcode for p in procs] == [-signal.SIGKILL] * 3
    assert ex._procs == []


@pytest.mark.slow
@pytest.mark.timeout(400)  # two cold starts of the command and its workers on a loaded machine
def test_ctrl_c_with_the_process_executor_keeps_exactly_the_completed_judgments(
    tmp_path: Path,
) -> None:
    # the first 5 requests are answered, every later one hangs (60 s): at Ctrl-C 5 judgments
    # are recorded and others are in flight in the workers; exactly the 5 stay, none of the
    # in-flight ones is recorded, no worker survives, and a resume does each of the rest once
    from attune_judge.testing import FaultServer

    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    base = [sys.executable, "-m", "attune_judge", "score", str(SAMPLES), "--lm", "openai/fake"]
    base += ["--response-format", "json_object", "--executor", "process", "--workers", "2"]
    base += ["--max-concurrency", "8", "-o", str(out), "-q"]
    with FaultServer(choose=lambda n, text, repeat: "ok" if n <= 5 else "hang", hang_s=60) as hung:
        argv = [*base, "--api-base", hung.url, "--timeout", "100"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 300
        log = out / "judgments.jsonl"
        while not (log.exists() and log.read_bytes().count(b"\n") >= 5 and hung.requests >= 9):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        workers = _children(proc.pid)
        assert len(workers) == 2
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert "interrupted" in err.decode() and "Traceback" not in err.decode()
    assert "leaked" not in err.decode()  # the queues' semaphores were unlinked
    assert [p for p in workers if _alive(p)] == []
    kept = read_jsonl(log, JudgmentRecord)
    assert len(kept) == 5 and all(j.status == "ok" for j in kept)
    assert len({j.item_id for j in kept}) == 5
    port = int(hung.url.rsplit(":", 1)[1].split("/")[0])  # the same address: the same judge
    with FaultServer(choose=lambda n, text, repeat: "ok", port=port) as healthy:
        done = subprocess.run(argv, env=env, capture_output=True)
        asked = healthy.requests
    assert done.returncode == 0, done.stderr.decode()
    lines = read_jsonl(log, JudgmentRecord)
    assert lines[:5] == kept  # the completed ones untouched
    ids = [j.item_id for j in lines]
    assert len(ids) == len(set(ids)) == 57  # 19 turns x 3 models, each exactly once
    assert asked == 57 - 5


def _children(pid: int) -> list[int]:
    """The worker processes (spawned by multiprocessing, not its resource tracker) whose
    parent is ``pid``, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and b"spawn_main" in _cmdline(stat.parent):
            found.append(int(stat.parent.name))
    return found


def _cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""
