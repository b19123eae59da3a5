"""Every command's worker recipe, without starting workers: what a Ray actor or a worker
process would receive (the judge factory, the task function, the tasks) crosses a pickle
"wire" here and is rebuilt in this process. The rebuilt judges must carry exactly the ids of
the plan's judges, the results must equal a thread run's, and no key may be on the wire.

(The Ray executor itself is tested on a real cluster in ``test_ray_executor.py``.)
"""

from __future__ import annotations

import json
import pickle
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from attune_judge.data import read_jsonl
from attune_judge.lm import LMSettings
from attune_judge.runner import ExecutionOptions, JudgeFactory, Task
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.conftest import SAMPLES
from tests.sensitivity._scripted import answer as sensitivity_answer
from tests.sensitivity._scripted import run_scores, variants_run

SECRET = "sk-parent-secret-4242"


class WireExecutor:
    """Runs tasks as a remote worker would: everything it gets has crossed a pickle wire."""

    def __init__(self, factory: JudgeFactory | None) -> None:
        self.blobs: list[bytes] = [pickle.dumps(factory)]
        rebuilt = pickle.loads(self.blobs[0])
        self.judges = {j.judge_id: j for j in rebuilt.build()} if rebuilt else {}
        self.n_tasks = 0

    def map_unordered(
        self, fn: Callable[[Any], Any], tasks: Iterable[Any], *, stop: threading.Event | None = None
    ) -> Iterator[Any]:
        self.blobs.append(pickle.dumps(fn))
        remote_fn = pickle.loads(self.blobs[-1])
        for task in tasks:
            if isinstance(task, Task):
                wire: Any = (task.item, task.judge.judge_id)
                self.blobs.append(pickle.dumps(wire))
                item, judge_id = pickle.loads(self.blobs[-1])
                task = Task(item, self.judges[judge_id])  # KeyError: the ids differ
            else:
                self.blobs.append(pickle.dumps(task))
                task = pickle.loads(self.blobs[-1])
            self.n_tasks += 1
            yield remote_fn(task)

    def close(self) -> None:
        pass


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> list[WireExecutor]:
    """Every command's ``scaled_executor`` hands out a :class:`WireExecutor` instead."""
    made: list[WireExecutor] = []

    @contextmanager
    def fake(kind: str, factory: JudgeFactory | None, **_: Any) -> Iterator[Any]:
        if kind == "thread":
            yield None
            return
        made.append(WireExecutor(factory))
        yield made[-1]

    import attune_judge.runner as runner

    # private unit: the worker recipe each command hands scaled_executor (the pickled judge
    # factory, task function and tasks), checked without starting workers: the commands
    # import scaled_executor into their own modules, so it is replaced there
    import attune_judge.runner._generate as generate
    import attune_judge.runner._scale as scale

    for module in (runner, generate, scale):
        monkeypatch.setattr(module, "scaled_executor", fake)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return made


def _no_secret(made: list[WireExecutor]) -> None:
    assert made and made[-1].n_tasks > 0
    assert not any(SECRET.encode() in blob for blob in made[-1].blobs)


def test_sensitivity_workers_rebuild_the_variants_judges(
    wire: list[WireExecutor], tmp_path: Path
) -> None:
    from attune_judge.sensitivity import SensitivityConfig, run_sensitivity

    with FakeBatchServer(sensitivity_answer) as server:
        common: Any = variants_run(tmp_path, "wire", server.base_url)
        on_wire = run_sensitivity(SensitivityConfig(**common, out=tmp_path / "w", executor="ray"))
        threads = run_sensitivity(SensitivityConfig(**common, out=tmp_path / "t"))
        close_http_clients()
    assert on_wire.judge_ids == threads.judge_ids
    assert set(wire[0].judges) == set(on_wire.judge_ids.values())
    assert on_wire.n_run == threads.n_run == 3 * 3 * 3  # 3 judges x 9 items
    _no_secret(wire)
    assert run_scores(tmp_path / "w") == run_scores(tmp_path / "t")


def test_validate_workers_rebuild_the_judge(wire: list[WireExecutor], tmp_path: Path) -> None:
    from attune_judge.validate import validate_judge

    def reply(messages: list[dict[str, Any]]) -> str:
        # whatever the rubric's fields are, answer them from the schema the prompt names
        import re

        fields = re.findall(r"\[\[ ## (\w+) ## \]\]", messages[0]["content"])
        outputs = [f for f in fields if f not in ("conversation", "response", "context")]
        return json.dumps({f: 3 if f != "rationale" else "fake" for f in outputs})

    with FakeBatchServer(reply) as server:
        res = validate_judge(
            "empathic-communication-epitome",
            "openai/fake",
            tmp_path / "v",
            limit=3,
            B=100,
            report_files=False,
            execution=ExecutionOptions(executor="ray"),
            lm_settings=LMSettings(api_base=server.base_url),
        )
        close_http_clients()
    assert res.n_items == 3 and wire[0].n_tasks == 3
    assert sum(res.n_failed.values()) + res.n_ok == 3
    _no_secret(wire)


def test_generate_workers_resolve_the_model_themselves(
    wire: list[WireExecutor], tmp_path: Path
) -> None:
    from attune_judge.runner import run_generate
    from attune_judge.runner._candidates import Candidate

    with FakeBatchServer(lambda m: json.dumps({"reply": "DRAFTED"})) as server:
        res = run_generate(
            SAMPLES,
            tmp_path / "cands.jsonl",
            executor_kind="ray",
            lm=LMSettings(lm="openai/fake", api_base=server.base_url),
        )
        close_http_clients()
    cands = read_jsonl(tmp_path / "cands.jsonl", Candidate)
    assert res.n_written == len(cands) == wire[0].n_tasks > 0
    assert {c.response for c in cands} == {"DRAFTED"}
    _no_secret(wire)


def test_bench_workers_rebuild_the_evaluators(wire: list[WireExecutor], tmp_path: Path) -> None:
    from attune_judge.tasks import BenchConfig, run_bench
    from tests.tasks._fixtures import write_data

    data = write_data(tmp_path / "data")
    with FakeBatchServer(lambda m: "{}") as server:  # every unit fails to parse: plumbing only
        config = BenchConfig(
            data=data,
            models=["openai/alpha", "openai/beta"],
            judge_lm="openai/judge",
            out=tmp_path / "b",
            tasks=["emotion", "preference"],
            max_failure_rate=1.0,
            B=100,
            executor="ray",
            lm_settings=LMSettings(api_base=server.base_url),
        )
        result = run_bench(config)
        close_http_clients()
    assert result.n_run == result.n_units == wire[0].n_tasks > 0
    _no_secret(wire)
