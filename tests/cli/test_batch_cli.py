"""``attune-judge score DATA --lm openai/M -o RUN --batch`` (the README's command) end to end
against the loopback fake of the files and batches endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.testing import FakeBatchServer, close_http_clients
from tests.runner.test_ray_executor import answer, judge_items

pytestmark = pytest.mark.timeout(120)


def test_score_batch_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    data = judge_items(tmp_path / "items.jsonl", 6)
    run = tmp_path / "run"
    try:
        with FakeBatchServer(answer) as server:
            argv = ["score", str(data), "--lm", "openai/gpt-4.1-mini", "-o", str(run)]
            argv += ["--batch", "--api-base", server.base_url, "--batch-poll", "0.01", "-q"]
            with pytest.raises(SystemExit) as stop:
                main(argv)
            assert (stop.value.code or 0) == 0, capsys.readouterr().err
    finally:
        close_http_clients()
    judgments = read_jsonl(run / "judgments.jsonl", Judgment)
    assert len(judgments) == 6 and all(j.status == "ok" for j in judgments)
    batches = (run / "batch" / "batches.jsonl").read_text("utf-8").splitlines()
    assert len(batches) >= 1 and json.loads(batches[0])
