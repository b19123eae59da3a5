"""Real Inspect AI logs for the tests, made by ``inspect_ai.eval`` on a tiny task with Inspect's
offline mock model (``mockllm/...`` with scripted replies), never written by hand.

Design (what the tests expect follows from it, not from our code):

- six samples ``s1``..``s6``; ``s1`` has a system and a user message, the others one user
  message (a plain string input);
- model ``mockllm/model`` replies ``"reply: <last user text>"``; model ``mockllm/other``
  replies the same to ``s2`` and ``s3`` and ``"other: <text>"`` to the rest;
- the targets of ``s1, s2, s3, s5`` are the ``mockllm/model`` reply, of ``s4, s6`` another text,
  so Inspect's ``match`` scorer grades ``mockllm/model`` C C C I C I and ``mockllm/other``
  I C C I I I;
- ``warmth`` (0-1): the sample's metadata value for a ``reply:`` reply, half of it otherwise;
- ``stars`` (1-5): the sample's metadata value, and the string ``"X"`` on ``s6``.

A second task without a scorer gives a log without scores.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

TEXTS = {
    "s1": "I failed my exam.",
    "s2": "My cat is ill.",
    "s3": "I got the job!",
    "s4": "I feel alone.",
    "s5": "My friend moved away.",
    "s6": "I can't sleep.",
}
SYSTEM = "Be kind and brief."
WARMTH = {"s1": 0.9, "s2": 0.8, "s3": 0.7, "s4": 0.2, "s5": 0.6, "s6": 0.1}
STARS = {"s1": 5, "s2": 4, "s3": 4, "s4": 2, "s5": 3, "s6": None}
RIGHT = ("s1", "s2", "s3", "s5")
OTHER_SAME = ("s2", "s3")
MATCH = {
    "mockllm/model": {s: 1.0 if s in RIGHT else 0.0 for s in TEXTS},
    "mockllm/other": {s: 1.0 if s in RIGHT and s in OTHER_SAME else 0.0 for s in TEXTS},
}
"""What Inspect's match scorer must give (C = 1, I = 0), from the design above."""


def reply(model: str, sample: str) -> str:
    text = TEXTS[sample]
    same = model == "mockllm/model" or sample in OTHER_SAME
    return f"reply: {text}" if same else f"other: {text}"


@dataclass(frozen=True)
class Logs:
    one: Path
    """The scored log of ``mockllm/model``."""
    two_models: Path
    """A folder with the scored logs of both models."""
    unscored: Path
    """The log of the task without a scorer (``mockllm/model``)."""


class _Offline:
    """Refuses every connection that leaves the machine (Inspect must not need one)."""

    def __init__(self) -> None:
        self.attempts: list[Any] = []
        self._real = socket.socket.connect

    def __enter__(self) -> _Offline:
        real, attempts = self._real, self.attempts

        def connect(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in (
                "127.0.0.1",
                "::1",
                "localhost",
            ):
                attempts.append(address)
                raise OSError(f"test: no network ({address})")
            return real(sock, address)

        socket.socket.connect = connect  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect = self._real  # type: ignore[method-assign]


def make_logs(root: Path) -> Logs:
    """Run the tiny tasks offline into ``root / "logs"`` in a child process (Inspect's event
    loop, threads and warnings stay out of the test process; its traces and caches go under
    ``root``) and return the logs."""
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(root / "xdg-data"),
        "XDG_CACHE_HOME": str(root / "xdg-cache"),
        "INSPECT_DISPLAY": "none",
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p
        ),
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.adapters._inspect_logs", str(root / "logs")],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    paths = json.loads(done.stdout.strip().splitlines()[-1])
    return Logs(**{k: Path(v) for k, v in paths.items()})


def _run(log_dir: Path) -> Logs:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (
        ChatMessageSystem,
        ChatMessageUser,
        ModelOutput,
        ModelUsage,
        get_model,
    )
    from inspect_ai.scorer import Score, Target, match, mean, scorer
    from inspect_ai.solver import TaskState, generate

    def mock(name: str) -> Any:
        def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
            sample = next(s for s, t in TEXTS.items() if t == messages[-1].text)
            out = ModelOutput.from_content(model=name, content=reply(name, sample))
            # usage given: the mock then counts no tokens (which would fetch a tokenizer)
            out.usage = ModelUsage(input_tokens=5, output_tokens=5, total_tokens=10)
            return out

        return get_model(name, custom_outputs=answer)

    @scorer(metrics=[mean()])
    def warmth() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            full = state.metadata["warmth"]
            value = full if state.output.completion.startswith("reply:") else full / 2
            return Score(value=value, explanation=f"warmth {value:g}")

        return score

    @scorer(metrics=[])
    def stars() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            value = state.metadata["stars"]
            return Score(value="X" if value is None else value, explanation="stars")

        return score

    samples = [
        Sample(
            id=s,
            input=[ChatMessageSystem(content=SYSTEM), ChatMessageUser(content=text)]
            if s == "s1"
            else text,
            target=reply("mockllm/model", s) if s in RIGHT else "something else",
            metadata={"warmth": WARMTH[s], "stars": STARS[s]},
        )
        for s, text in TEXTS.items()
    ]
    scored = Task(
        name="tiny",
        dataset=samples,
        solver=generate(),
        scorer=[match(location="exact"), warmth(), stars()],
    )
    unscored = Task(name="tiny_unscored", dataset=samples[:2], solver=generate())
    results = inspect_eval(
        [scored, unscored],
        model=[mock("mockllm/model"), mock("mockllm/other")],
        log_dir=str(log_dir),
        display="none",
        max_tasks=4,
    )
    by = {}
    for log in results:
        assert log.status == "success", (log.eval.task, log.error)
        by[(log.eval.task, log.eval.model)] = Path(log.location.removeprefix("file://"))
    two = log_dir / "two-models"
    two.mkdir()
    for model in ("mockllm/model", "mockllm/other"):
        src = by[("tiny", model)]
        (two / src.name).write_bytes(src.read_bytes())
    return Logs(
        one=by[("tiny", "mockllm/model")],
        two_models=two,
        unscored=by[("tiny_unscored", "mockllm/model")],
    )


if __name__ == "__main__":  # the child process of make_logs
    with _Offline() as offline:
        made = _run(Path(sys.argv[1]))
    if offline.attempts:
        sys.exit(f"Inspect tried to reach the network: {offline.attempts}")
    print(json.dumps({k: str(v) for k, v in vars(made).items()}))
