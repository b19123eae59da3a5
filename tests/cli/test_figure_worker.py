"""The run commands draw their report's figures in a worker process (issue 47: matplotlib is
imported on the idle core while the command judges, not after it).

Each test runs the ``attune-judge`` console script (``main()`` in a child process: the worker
is not started by ``main(argv)``) against a loopback FaultServer, and finds the processes the
command started by a mark in their environment (``/proc``). The figures are compared byte for
byte with the ones ``attune-judge report`` draws again in this process (no worker there).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from attune_judge.cli import main
from attune_judge.data import ChatMessage, JudgeItem, write_jsonl
from attune_judge.testing import FaultServer
from tests.conftest import REPO_ROOT, SAMPLES

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc"),
]

CONSOLE = """
import atexit, sys
atexit.register(lambda: print("matplotlib in the command:", "matplotlib" in sys.modules,
                              file=sys.stderr))
from attune_judge.cli import main
main()
"""
"""The console script, telling at exit whether the command itself imported matplotlib."""


def _marked(mark: str) -> set[int]:
    """Live processes whose environment carries ``mark``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


_MARKS: list[str] = []


@pytest.fixture(autouse=True)
def _no_survivor() -> Iterator[None]:
    """A failing test leaves no process behind either."""
    yield
    for mark in _MARKS:
        for pid in _marked(mark):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    _MARKS.clear()


class Command:
    """``attune-judge ARGS`` in a child process; ``started`` collects the processes it starts."""

    def __init__(self, tmp: Path, *args: str | Path) -> None:
        self.mark = f"figure-worker-test-{uuid.uuid4()}"
        _MARKS.append(self.mark)
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src"), "TEST_MARK": self.mark}
        self.argv = [sys.executable, "-c", CONSOLE, *map(str, args)]
        self.env, self.cwd = env, tmp
        self.started: set[int] = set()
        self.proc: subprocess.Popen[bytes] | None = None

    def children(self) -> set[int]:
        assert self.proc is not None
        now = _marked(self.mark) - {self.proc.pid}
        self.started |= now
        return now

    def run(self) -> tuple[int, str]:
        log = self.cwd / f"stderr-{self.mark}.txt"
        with log.open("w", encoding="utf-8") as err:
            self.proc = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,  # a Ctrl-C to its process group reaches it alone
            )
            while self.proc.poll() is None:
                self.children()
                time.sleep(0.02)
        return self.proc.returncode, log.read_text(encoding="utf-8")


def _on_first_request(action: Callable[[], None]) -> Callable[[int, str, int], str]:
    done = threading.Event()

    def choose(n: int, text: str, repeat: int) -> str:
        if not done.is_set():
            done.set()
            action()
        return "ok"

    return choose


def _score(tmp: Path, url: str, data: Path = SAMPLES, out: str = "run") -> Command:
    return Command(
        tmp,
        "score",
        data,
        "--lm",
        "openai/fake",
        "--api-base",
        url,
        "--response-format",
        "json_object",
        "-B",
        "200",
        "-q",
        "-o",
        tmp / out,
    )


def _figures(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "figures").iterdir())}


def _drawn_again_here(run: Path) -> dict[str, bytes]:
    """The run's figures as ``attune-judge report`` draws them in this process."""
    for png in (run / "figures").iterdir():
        png.unlink()
    (run / ".figure-keys.json").unlink()
    with pytest.raises(SystemExit) as done:
        main(["report", str(run)])
    assert done.value.code in (0, None)
    return _figures(run)


def test_score_has_its_figures_drawn_by_the_worker_byte_for_byte(tmp_path: Path) -> None:
    with FaultServer() as server:
        command = _score(tmp_path, server.url)
        during: list[set[int]] = []
        server.choose = _on_first_request(lambda: during.append(command.children()))
        code, err = command.run()
    assert code == 0, err
    assert during and during[0], "a worker process runs while the command judges"
    assert "matplotlib in the command: False" in err  # every figure was drawn by the worker
    assert not _marked(command.mark), "nothing the command started outlives it"
    figures = _figures(tmp_path / "run")
    assert len(figures) >= 2  # the forest and status plots
    assert _drawn_again_here(tmp_path / "run") == figures


def test_a_worker_killed_during_the_run_leaves_the_figures_to_the_command(
    tmp_path: Path,
) -> None:
    killed: list[int] = []

    def kill() -> None:
        for pid in command.children():
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    with FaultServer(choose=_on_first_request(kill)) as server:
        command = _score(tmp_path, server.url)
        code, err = command.run()
    assert killed, "the worker was running during the judging"
    assert code == 0, err
    assert "matplotlib in the command: True" in err  # drawn in-process instead
    assert not _marked(command.mark)
    figures = _figures(tmp_path / "run")
    assert len(figures) >= 2
    assert _drawn_again_here(tmp_path / "run") == figures


def test_the_worker_ends_with_a_command_that_fails_or_is_interrupted(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"  # no reference reply, which the default rubric shows
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
            )
        ],
    )
    with FaultServer() as server:
        failing = _score(tmp_path, server.url, items, "failing")
        code, err = failing.run()
        assert code == 2, err
        assert "no item has a reference reply" in err
        assert failing.started, "the worker was started with the command"
        assert not _marked(failing.mark)

        interrupted = _score(tmp_path, server.url, out="interrupted")
        server.choose = _on_first_request(
            lambda: os.killpg(interrupted.proc.pid, signal.SIGINT)  # type: ignore[union-attr]
        )
        code, err = interrupted.run()
    assert code == 130, err
    assert interrupted.started
    assert not _marked(interrupted.mark)
    assert "Traceback" not in err  # the worker takes no part in Ctrl-C


def test_the_worker_ends_when_the_command_is_killed(tmp_path: Path) -> None:
    with FaultServer() as server:
        killed = _score(tmp_path, server.url)
        server.choose = _on_first_request(
            lambda: os.kill(killed.proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
        )
        code, _ = killed.run()
    assert code == -signal.SIGKILL
    assert killed.started
    # the worker reads the end of its input and exits: waited for (not timed; the test's own
    # timeout ends a worker that never does), however long its imports take on a loaded machine
    while _marked(killed.mark):
        time.sleep(0.1)
