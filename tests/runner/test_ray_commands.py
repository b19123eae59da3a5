"""``sensitivity`` and ``generate`` on the real local Ray cluster (``ray_cluster``): the actors
rebuild each command's judges from its recipe, and the results equal a thread run's.

(Every command's recipe crossing a pickle wire, keys included, is in
``test_scale_factories.py``; ``score`` on Ray in ``test_ray_executor.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.lm import LMSettings
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.conftest import NODE_KEY, SAMPLES
from tests.sensitivity._scripted import answer as sensitivity_answer
from tests.sensitivity._scripted import run_scores, variants_run

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def test_sensitivity_on_ray_equals_threads(ray_cluster: Any, tmp_path: Path) -> None:
    from attune_judge.sensitivity import SensitivityConfig, run_sensitivity

    with FakeBatchServer(sensitivity_answer) as server:
        common: Any = variants_run(tmp_path, "ray", server.base_url)
        on_ray = run_sensitivity(
            SensitivityConfig(**common, out=tmp_path / "r", executor="ray", workers=2)
        )
        calls = server.chat_calls
        assert calls == 27  # 3 judges x 9 items, all asked by the actors, with the node's key
        assert set(server.authorizations) == {f"Bearer {NODE_KEY}"}
        threads = run_sensitivity(SensitivityConfig(**common, out=tmp_path / "t"))
        close_http_clients()
    assert on_ray.judge_ids == threads.judge_ids
    assert on_ray.n_run == threads.n_run == 27
    assert run_scores(tmp_path / "r") == run_scores(tmp_path / "t")


def test_generate_on_ray_writes_every_candidate(ray_cluster: Any, tmp_path: Path) -> None:
    from attune_judge.runner import run_generate

    with FakeBatchServer(lambda m: json.dumps({"reply": "DRAFTED"})) as server:
        res = run_generate(
            SAMPLES,
            tmp_path / "cands.jsonl",
            executor_kind="ray",
            lm=LMSettings(lm="openai/fake", api_base=server.base_url),
        )
        close_http_clients()
    lines = (tmp_path / "cands.jsonl").read_text("utf-8").splitlines()
    cands = [json.loads(line) for line in lines]
    assert res.n_written == len(cands) == server.chat_calls > 0
    assert {c["response"] for c in cands} == {"DRAFTED"}
