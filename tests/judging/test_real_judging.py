"""Pairwise and behaviour judging from the command line with real models: the embedded model
in-process, and llama.cpp's OpenAI-compatible server on loopback. Slow; small data (one
conversation). The model is tiny, so only the mechanics are checked: every judgment is a
recorded outcome (ok with a valid answer, or a named failure), both orders are asked, and
the ids join the participants' own labels in ``calibrate``."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.testing import close_http_clients
from tests.conftest import SAMPLES
from tests.judges.test_real_models import llama_server
from tests.judging._stub_judges import read_jsonl_rows

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None and os.environ.get("CI") != "true",
        reason="the local extra (llama-cpp-python) is not installed",
    ),
]


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def _one_conversation(tmp_path: Path, turns: int) -> Path:
    """The first ``turns`` turns of one sample conversation (of 3): what is checked is the same
    for every turn, and each turn costs the tiny model on two cores seconds per call."""
    folder = tmp_path / "data"
    folder.mkdir()
    conversation = json.loads((SAMPLES / "conversation_5.json").read_text("utf-8"))
    conversation["turns"] = conversation["turns"][:turns]
    (folder / "conversation_5.json").write_text(json.dumps(conversation), "utf-8")
    return folder


# LiteLLM keeps the HTTP clients of the runner's worker threads in a module cache; their
# sockets are only closed when collected, after the test (third-party, not our leak)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_pairwise_through_the_llama_cpp_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ATTUNE_CACHE", "0")
    data = _one_conversation(tmp_path, turns=1)
    run = tmp_path / "run"
    with llama_server("smollm2", tmp_path) as base:
        argv = ["score", str(data), "--rubric", "attunebench-pairwise", "-o", str(run), "-q"]
        argv += ["--lm", "openai/smollm2", "--api-base", base, "--response-format", "json_object"]
        code = _cli([*argv, "--max-tokens", "200", "--max-failure-rate", "1"])
    close_http_clients()
    assert code in (0, 3)  # 3: a tiny model may fail to answer every pair
    prefs = tmp_path / "prefs.jsonl"
    assert _cli(["data", "preferences", str(data), "-o", str(prefs)]) == 0
    expected = {p["item_id"] for p in read_jsonl_rows(prefs)}
    judgments = read_jsonl_rows(run / "judgments.jsonl")
    assert {j["item_id"] for j in judgments} == expected
    for j in judgments:
        assert j["status"] in ("ok", "parse_error", "lm_error"), j
        if j["status"] == "ok":
            assert j["verdict"] in ("A", "B", "tie", "inconsistent")
            assert j["details"]["order_ab"] in ("A", "B", "tie")
            assert j["details"]["order_ba"] in ("A", "B", "tie")
            assert j["usage"]["calls"] >= 2 and j["details"]["request_s"] > 0
    summary = json.loads((run / "summary.json").read_text())
    if any(j["status"] == "ok" for j in judgments):
        block = next(iter(summary["judges"].values()))
        assert block["pairwise"]["n_pairs"] == sum(j["status"] == "ok" for j in judgments)


def test_behaviour_items_with_the_embedded_model(tmp_path: Path) -> None:
    data = _one_conversation(tmp_path, turns=2)
    run = tmp_path / "run"
    argv = ["score", str(data), "--rubric", "attunebench-behaviours", "-o", str(run), "-q"]
    code = _cli([*argv, "--models", "original", "--lm", "local", "--max-failure-rate", "1"])
    assert code in (0, 3)
    ratings = tmp_path / "ratings.jsonl"
    assert _cli(["data", "ratings", str(data), "-o", str(ratings)]) == 0
    asked = {r["item_id"] for r in read_jsonl_rows(ratings) if r["metadata"]["applicable"]}
    judgments = read_jsonl_rows(run / "judgments.jsonl")
    assert asked <= {j["item_id"] for j in judgments}
    ok = [j for j in judgments if j["status"] == "ok"]
    for j in ok:
        assert all(k.endswith(":observed") and v in (0.0, 1.0) for k, v in j["scores"].items())
        assert j["cost"] == 0.0  # the embedded model is free
    if ok:
        assert _cli(["calibrate", "--human", str(ratings), "--judge", str(run), "--B", "100"]) in (
            0,
            2,  # 2: too few joined answers on one conversation
        )
