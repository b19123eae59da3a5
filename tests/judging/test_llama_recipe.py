"""The README's llama.cpp recipe, run as written (issue 29): llama-cpp-python's server on the
embedded GGUF, then ``score`` in both score modes, within the default request timeout.

Only the GGUF path, the port and the output folders are substituted, and the sample
conversation is cut to its first turn: what is checked is the server's limits and timeouts,
which every turn meets alike (the whole conversation took three times as long).

Every judgment must be a model answer (ok, or a recorded ``parse_error`` of the tiny model),
never an ``lm_error``: a request that ran into the timeout, or that generated until the context
was full because the server ignored the token limit (``max_completion_tokens``), would be one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.testing import close_http_clients
from tests.conftest import REPO_ROOT
from tests.judges.test_real_models import _free_port
from tests.judging._stub_judges import read_jsonl_rows

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None and os.environ.get("CI") != "true",
        reason="the local extra (llama-cpp-python) is not installed",
    ),
]


def _recipe() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text("utf-8")
    block = text.split("<!-- llama-cpp-recipe -->", 1)[1].split("```bash\n", 1)[1]
    return [line for line in block.split("```", 1)[0].splitlines() if line.strip()]


def _cli(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    return 0


@pytest.mark.timeout(1800)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_the_readme_llama_cpp_recipe_runs_in_both_score_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from attune_judge.lm import default_gguf_path

    server, *commands = _recipe()
    assert server.startswith("python -m llama_cpp.server") and server.endswith("&")
    assert len(commands) == 2 and all(c.startswith("attune-judge score") for c in commands)
    port = str(_free_port())
    argv = shlex.split(server.rstrip("& "))
    argv = [sys.executable if a == "python" else a for a in argv]
    argv = [
        str(default_gguf_path()) if a == "MODEL.gguf" else port if a == "8000" else a for a in argv
    ]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(REPO_ROOT)  # the recipe's data paths are the repository's
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "llama_cpp.server did not start"
                time.sleep(0.5)
        sample = "data/samples/attunebench/conversation_5.json"
        conversation = json.loads((REPO_ROOT / sample).read_text("utf-8"))
        conversation["turns"] = conversation["turns"][:1]
        first_turn = tmp_path / "conversation_5.json"
        first_turn.write_text(json.dumps(conversation), "utf-8")
        for n, command in enumerate(commands):
            assert sample in command
            command = command.replace(sample, str(first_turn))
            args = shlex.split(command.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))[1:]
            out = tmp_path / f"run{n}"
            args[args.index("-o") + 1] = str(out)
            started = time.monotonic()
            code = _cli([*args, "-q"])
            seconds = time.monotonic() - started
            judgments = read_jsonl_rows(out / "judgments.jsonl")
            statuses = [j["status"] for j in judgments]
            assert code in (0, 3), (command, statuses)
            assert judgments and "lm_error" not in statuses, [j["error"] for j in judgments]
            assert "ok" in statuses, [j["raw_output"] for j in judgments]
            if "--score-mode expected" in command:
                ok = [j for j in judgments if j["status"] == "ok"]
                assert all(j["details"]["distributions"] for j in ok)
            print(f"{command[:60]}...: {statuses} in {seconds:.0f} s")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        close_http_clients()
    assert re.search(r"llama", (tmp_path / "server.log").read_text(), re.I)
