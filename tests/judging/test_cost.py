"""Cost from token prices (a jury's too), request time apart from queue time, and ``--max-cost``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from attune_judge.cli import main

# private unit: the price table and per-judgment cost
from attune_judge.runner._cost import Pricing, token_prices
from tests._openai_stub import openai_stub
from tests.cli.test_model_options import _reference_answer
from tests.conftest import SAMPLES
from tests.judging._stub_judges import read_jsonl_rows


@pytest.fixture(autouse=True)
def _no_request_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTUNE_CACHE", "0")


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def test_prices_come_from_litellms_table_unless_given() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    info = litellm.model_cost["gpt-4o-mini"]
    expected = (info["input_cost_per_token"], info["output_cost_per_token"])
    assert token_prices("openai/gpt-4o-mini", Pricing()) == expected
    assert token_prices("local", Pricing()) == (0.0, 0.0)
    # a server of one's own has no table price, even under an OpenAI model's name
    assert token_prices("openai/gpt-4o-mini", Pricing(api_base="http://127.0.0.1:1/v1")) is None
    assert token_prices("openai/my-model", Pricing()) is None
    given = Pricing(price_in=2.0, price_out=10.0)
    assert token_prices("openai/my-model", given) == (2e-6, 1e-5)
    from attune_judge.errors import UserError

    with pytest.raises(UserError, match="both --price-in and --price-out"):
        Pricing(price_in=1.0)


def _score(run: Path, url: str, *extra: str) -> int:
    argv = ["score", str(SAMPLES), "-o", str(run), "-q", "--models", "original"]
    argv += ["--lm", "openai/stub", "--api-base", url, "--max-concurrency", "1"]
    return _cli([*argv, *extra])


def test_cost_from_given_prices_and_request_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    with openai_stub(_reference_answer) as server:
        server.delay_s = 0.05
        assert _score(run, server.url, "--price-in", "2", "--price-out", "10") == 0
    judgments = read_jsonl_rows(run / "judgments.jsonl")
    per_call = (100 * 2 + 20 * 10) / 1e6  # the stub reports 100 prompt + 20 completion tokens
    for j in judgments:
        assert j["cost"] == pytest.approx(per_call)
        assert j["details"]["request_s"] >= 0.05
        assert j["details"]["queue_s"] == pytest.approx(
            j["latency_s"] - j["details"]["request_s"], abs=1e-5
        )
    summary = json.loads((run / "summary.json").read_text())
    totals = summary["run"]["totals"]
    assert totals["cost_usd"] == pytest.approx(per_call * len(judgments))
    assert totals["tokens"] == {
        "prompt": 100 * len(judgments),
        "completion": 20 * len(judgments),
        "calls": len(judgments),
    }
    (block,) = summary["judges"].values()
    assert block["totals"]["cost_usd"] == pytest.approx(totals["cost_usd"])
    assert block["models"]["original"]["request_s_mean"] >= 0.05
    assert f"cost ${per_call * len(judgments):.4f}" in capsys.readouterr().out
    assert "mean request (s)" in (run / "report.md").read_text()


def test_unpriced_model_cost_is_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    with openai_stub(_reference_answer) as server:
        assert _score(run, server.url) == 0
    assert all(j["cost"] is None for j in read_jsonl_rows(run / "judgments.jsonl"))
    assert "cost no prices known (19 judgment(s): --price-in" in capsys.readouterr().out
    with openai_stub(_reference_answer) as server:
        assert _score(tmp_path / "r2", server.url, "--max-cost", "1") == 2
        assert server.requests == []
    assert "--max-cost needs prices" in capsys.readouterr().err


def test_max_cost_stops_before_spending_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    prices = ["--price-in", "2", "--price-out", "10"]
    # one server throughout: the server's address is part of the judge id (issue 29)
    with openai_stub(_reference_answer) as server:
        # 0.0004 per judgment: the third reaches 0.001, and no fourth request starts
        assert _score(run, server.url, *prices, "--max-cost", "0.001") == 3
        assert len(server.requests) == 3
        assert len(read_jsonl_rows(run / "judgments.jsonl")) == 3
        assert "cost budget reached" in capsys.readouterr().err
        # resumed with the same budget: spent already, nothing is sent
        assert _score(run, server.url, *prices, "--max-cost", "0.001") == 3
        assert len(server.requests) == 3
        # a larger budget goes on from where it stopped
        assert _score(run, server.url, *prices, "--max-cost", "0.0021") == 3
        assert len(server.requests) == 6  # 6 x 0.0004 = 0.0024 >= 0.0021
    assert len(read_jsonl_rows(run / "judgments.jsonl")) == 6


def test_a_jury_with_no_priced_member_has_no_known_part() -> None:
    """Nothing priced is not $0: no ``cost_known`` (the summary then says no prices are
    known); one priced member keeps its part (the embedded model's is 0)."""
    from attune_judge.data import JudgeSpec, Judgment
    from attune_judge.runner._cost import Pricing, judgment_cost

    server = {"lm": "openai/my-own-model", "api_base": "http://127.0.0.1:9/v1"}
    a, b = {"program": "rubric", "lm": server}, {"program": "rubric", "lm": dict(server, x=1)}
    local = {"program": "rubric", "lm": "local"}
    usage = {"prompt_tokens": 10, "completion_tokens": 5}
    for members, known in (([a, b], None), ([a, local], 0.0)):
        judgment = Judgment(
            item_id="i",
            judge_id="jury",
            details={
                "members": [
                    {"judge_id": JudgeSpec.model_validate(m).judge_id(), "usage": usage}
                    for m in members
                ]
            },
        )
        spec = {"program": "jury", "members": members}
        pricing = Pricing(api_base="http://127.0.0.1:9/v1")
        assert judgment_cost(judgment, spec, pricing) is None
        assert judgment.details.get("cost_known") == known


def test_a_jury_cost_keeps_its_priced_part() -> None:
    """One member priced (a table price), one not (a server's model): the jury's cost is
    unknown, its priced part and the count of unpriced answers are kept (the CLI's side, with
    the embedded model's 0: tests/judging/test_server_identity.py)."""
    from attune_judge.data import JudgeSpec, Judgment
    from attune_judge.runner._cost import judgment_cost

    priced = {"program": "reference", "lm": {"lm": "openai/gpt-4o-mini"}}
    unpriced = {"program": "reference", "lm": {"lm": "openai/x", "api_base": "http://h:1/v1"}}
    spec = {"program": "jury", "members": [priced, unpriced]}
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "calls": 1}
    members = [
        {"judge_id": JudgeSpec.model_validate(m).judge_id(), "usage": usage}
        for m in (priced, unpriced)
    ]
    judgment = Judgment(item_id="i", judge_id="jury", details={"members": members})
    assert judgment_cost(judgment, spec, Pricing()) is None
    import litellm

    price = litellm.model_cost["gpt-4o-mini"]
    expected = 1000 * price["input_cost_per_token"] + 100 * price["output_cost_per_token"]
    assert judgment.details["cost_known"] == pytest.approx(expected)
    assert judgment.details["members_unpriced"] == 1
