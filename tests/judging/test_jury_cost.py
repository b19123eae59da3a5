"""A jury's tokens and cost summed per member model, at each member's LiteLLM table price.

Two scripted engines answer under the names of two models LiteLLM's offline price table knows
(``LITELLM_LOCAL_MODEL_COST_MAP=True``, see conftest). What each engine saw is counted here
from its own request log (prompt words, as the scripted engine reports them) and from the
replies it gave (completion words), and priced with the table's numbers read directly.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from attune_judge.judges import Jury, build_judge
from attune_judge.runner import ScoreConfig, run_score
from attune_judge.testing import ScriptedEngine
from tests.cli.test_model_options import _reference_answer
from tests.conftest import SAMPLES

MODELS = ("openai/gpt-4o-mini", "openai/gpt-4o")


class _Counted:
    """A valid reference-judge answer; remembers the completion words it sent."""

    def __init__(self) -> None:
        self.completion_words = 0

    def __call__(self, messages: list[dict[str, str]]) -> str:
        text = _reference_answer({"messages": messages})
        self.completion_words += len(text.split())
        return text


def _table_price(model: str) -> tuple[float, float]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    info = litellm.model_cost[model.split("/", 1)[1]]
    return float(info["input_cost_per_token"]), float(info["output_cost_per_token"])


def test_jury_sums_tokens_and_cost_per_member_model(tmp_path: Path) -> None:
    responders = {m: _Counted() for m in MODELS}
    engines = {m: ScriptedEngine(responders[m], model=m) for m in MODELS}
    jury = Jury([build_judge("attunebench-reference", engines[m].lm(m)) for m in MODELS], "mean")
    run = tmp_path / "run"
    config = ScoreConfig(data=SAMPLES, out=run, models=["original"], quiet=True, B=50)
    result = run_score(config, judges=[jury])
    assert result.exit_code == 0
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    block = summary["judges"][jury.judge_id]
    members = block["members"]
    assert set(members) == set(MODELS)
    expected_total = 0.0
    n_judgments = len((run / "judgments.jsonl").read_text("utf-8").splitlines())
    for model in MODELS:
        engine = engines[model]
        prompt = sum(len(str(m["content"]).split()) for msgs in engine.requests for m in msgs)
        completion = responders[model].completion_words
        p_in, p_out = _table_price(model)
        cost = prompt * p_in + completion * p_out
        assert cost > 0
        got = members[model]
        assert got["tokens"] == {"prompt": prompt, "completion": completion, "calls": engine.calls}
        assert got["n_judged"] == n_judgments
        assert got["cost_usd"] == pytest.approx(cost, rel=1e-9)
        expected_total += cost
    # the two models have different prices: the members' costs differ, and the jury's cost
    # (per candidate model and in the run totals) is exactly their sum
    assert members[MODELS[0]]["cost_usd"] != pytest.approx(members[MODELS[1]]["cost_usd"])
    assert block["models"]["original"]["cost_usd"] == pytest.approx(expected_total, rel=1e-9)
    assert summary["run"]["totals"]["cost_usd"] == pytest.approx(expected_total, rel=1e-9)
    # each judgment keeps every member's own cost beside its usage
    for line in (run / "judgments.jsonl").read_text("utf-8").splitlines():
        j: dict[str, Any] = json.loads(line)
        parts = [e["cost"] for e in j["details"]["members"]]
        assert all(c > 0 for c in parts) and math.fsum(parts) == pytest.approx(j["cost"])
    from attune_judge.report import write_report

    write_report(run)  # the one report (what `attune-judge score` writes)
    report = (run / "report.md").read_text("utf-8")
    assert "Jury members: tokens and cost" in report
    for model in MODELS:
        row = next(r for r in report.splitlines() if r.startswith(f"| {model} |"))
        assert f"{members[model]['tokens']['prompt']:,}" in row
