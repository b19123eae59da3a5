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
import yaml

from attune_judge.data import Judgment, read_jsonl
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.conftest import NODE_KEY, SAMPLES
from tests.sensitivity._scripted import answer as sensitivity_answer
from tests.sensitivity._scripted import write_items

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def _scores(run: Path) -> set[tuple[str, str, str]]:
    return {
        (j.item_id, j.judge_id, json.dumps(j.scores, sort_keys=True))
        for j in read_jsonl(run / "judgments.jsonl", Judgment)
    }


def test_sensitivity_on_ray_equals_threads(ray_cluster: Any, tmp_path: Path) -> None:
    from attune_judge.sensitivity import SensitivityConfig, run_sensitivity

    data = tmp_path / "items.jsonl"
    write_items(data, n_conv=3, n_turns=1)
    variants = tmp_path / "variants.yaml"
    spec = {
        "name": "ray",
        "base": {"rubric": "attunebench-reference", "judge": {"reasoning": False}},
        "perturbations": [
            {"name": "scale-1-5", "kind": "change_scale", "min": 1, "max": 5},
            {"name": "shuffled", "kind": "shuffle_criteria", "seed": 3},
        ],
        "analysis": {"bootstrap_replicates": 200, "seed": 1},
    }
    variants.write_text(yaml.safe_dump(spec), "utf-8")
    with FakeBatchServer(sensitivity_answer) as server:
        common = {
            "data": data,
            "variants": variants,
            "lm": "openai/fake",
            "api_base": server.base_url,
            "quiet": True,
            "fsync": False,
        }
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
    assert _scores(tmp_path / "r") == _scores(tmp_path / "t")


def test_generate_on_ray_writes_every_candidate(ray_cluster: Any, tmp_path: Path) -> None:
    from attune_judge.runner import run_generate
    from attune_judge.runner._candidates import Candidate

    with FakeBatchServer(lambda m: json.dumps({"reply": "DRAFTED"})) as server:
        res = run_generate(
            SAMPLES,
            tmp_path / "cands.jsonl",
            lm="openai/fake",
            api_base=server.base_url,
            executor_kind="ray",
        )
        close_http_clients()
    cands = read_jsonl(tmp_path / "cands.jsonl", Candidate)
    assert res.n_written == len(cands) == server.chat_calls > 0
    assert {c.response for c in cands} == {"DRAFTED"}
