"""``score`` starts opening the request cache before it imports the runner (issue 47): the
disk shards (mostly waiting on the disk) open while the command imports and reads its items,
and the judges then keep that cache instead of opening another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from attune_judge.data import ChatMessage, JudgeItem, write_jsonl

# private unit: the request cache's background opening (lm._resolve) probed in a child

PROBE = """
import json, sys
import attune_judge.lm._resolve as resolve

seen = []
opened = resolve._open_in_background

def probe(path):
    seen.append({"runner_imported": "attune_judge.runner" in sys.modules, "path": str(path)})
    return opened(path)

resolve._open_in_background = probe
from attune_judge.cli._main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(seen))
"""


def test_score_opens_the_request_cache_once_before_importing_the_runner(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    write_jsonl(
        items,
        [
            JudgeItem(
                item_id="c1:1:m",
                conversation_id="c1",
                turn=1,
                context=[ChatMessage(role="user", content="I failed my exam.")],
                candidate="That is hard.",
                candidate_model="m",
                reference="I'm sorry, that hurts.",
            )
        ],
    )
    cache = tmp_path / "cache"
    env = {**os.environ, "ATTUNE_CACHE_DIR": str(cache)}
    argv = [
        "score",
        str(items),
        "--lm",
        "openai/m",
        "--api-base",
        "http://127.0.0.1:9/v1",  # nobody answers: the judgment fails, the cache is opened
        "--max-retries",
        "0",
        "-q",
        "-o",
        str(tmp_path / "run"),
    ]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], env=env, capture_output=True, text=True
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == [{"runner_imported": False, "path": str(cache)}], done.stderr
