"""A run directory that cannot be corrupted: one process at a time, clean failures, resume.

- two processes on one directory: the second is refused (exit 2) naming the holder's PID, and
  nothing is paid for twice or written twice; a lock left by a killed process is taken over;
- a full disk / read-only file system while writing (simulated by patching the writer): one
  line naming the file, exit 2, no torn line and no ``*.tmp`` left, the manifest's run count
  not bumped — and the same command resumes once the cause is fixed;
- input files that are not UTF-8: one line naming the file (and line), exit 2.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from attune_judge.cli import main
from attune_judge.data import Judgment, read_jsonl
from attune_judge.errors import UserError
from attune_judge.runner import RunDir, ScoreConfig, run_score
from attune_judge.testing import ScriptedEngine
from tests.conftest import REPO_ROOT, SAMPLES
from tests.runner._real import reference_judge, scripted_answer, write_items

pytestmark = pytest.mark.timeout(120)


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return int(stop.value.code or 0), err


def _score(tmp: Path, engine: ScriptedEngine, name: str = "run") -> Any:
    config = ScoreConfig(
        data=tmp / "items.jsonl",
        out=tmp / name,
        lm="scripted/judge",
        max_concurrency=2,
        quiet=True,
        B=200,
    )
    return run_score(config, judges=[reference_judge(engine)])


# -- one process at a time -----------------------------------------------------------------


def _spawn_slow_run(tmp: Path, name: str) -> subprocess.Popen[bytes]:
    path = os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "src")])
    env = {**os.environ, "ATTUNE_CACHE_DIR": str(tmp / "cache"), "PYTHONPATH": path}
    with (tmp / f"{name}.stderr").open("wb") as err:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.runner._slow_run",
                str(tmp / "items.jsonl"),
                str(tmp / "run"),
                str(tmp / f"{name}.json"),
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


@pytest.mark.slow
def test_two_processes_on_one_directory(tmp_path: Path) -> None:
    items = write_items(tmp_path / "items.jsonl", n_conv=10, n_turns=4)  # 80 items, ~1 s
    first = _spawn_slow_run(tmp_path, "first")
    lock = tmp_path / "run" / ".attune.lock"
    deadline = time.monotonic() + 60
    while not (lock.exists() and lock.read_text().strip()):
        assert first.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    second = _spawn_slow_run(tmp_path, "second")
    second.wait(timeout=60)
    first.wait(timeout=120)
    assert first.returncode == 0, (tmp_path / "first.stderr").read_text()
    assert second.returncode != 0
    err = (tmp_path / "second.stderr").read_text()
    assert f"is in use by another attune-judge process (PID {first.pid})" in err
    assert not (tmp_path / "second.json").exists()  # the second asked the model nothing
    report = json.loads((tmp_path / "first.json").read_text())
    assert report["calls"] == len(items)  # everything paid for exactly once
    judgments = read_jsonl(tmp_path / "run" / "judgments.jsonl", Judgment)
    assert Counter(j.item_id for j in judgments) == Counter(it.item_id for it in items)
    assert not lock.exists()  # released


def test_cli_refuses_a_locked_directory_then_takes_over_a_dead_holders_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from attune_judge.runner import RunDir\n"
            "with RunDir(sys.argv[1]).lock():\n"
            "    print('locked', flush=True); time.sleep(60)",
            str(out),
        ],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        argv = ["score", SAMPLES / "conversation_5.json", "--rubric", "length", "-o", out, "-q"]
        code, err = _cli(capsys, *argv)
        assert code == 2
        assert f"run directory {out} is in use by another attune-judge process" in err
        assert f"(PID {holder.pid})" in err
        assert len(err.strip().splitlines()) == 1
        assert not (out / "manifest.json").exists()  # nothing was touched
        holder.send_signal(signal.SIGKILL)  # dies holding the lock: its lock file stays
        holder.wait()
        assert (out / ".attune.lock").read_text().strip() == str(holder.pid)
        code, err = _cli(capsys, *argv)
        assert code == 0, err
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert (out / "manifest.json").exists() and not (out / ".attune.lock").exists()


# -- a full disk / read-only file system while writing --------------------------------------


class _FailingDisk:
    """``os.write`` on a disk that fills up: the ``fail_at``-th append to a judgments log
    writes half a line, then fails (other files are written as usual)."""

    def __init__(self, fail_at: int, code: int) -> None:
        self.writes = 0
        self.fail_at = fail_at
        self.code = code
        self.real = os.write

    def __call__(self, fd: int, data: Any) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.endswith("judgments.jsonl"):
            self.writes += 1
            if self.writes >= self.fail_at:
                self.real(fd, bytes(data)[: len(data) // 2])  # a torn half line hits the disk
                raise OSError(self.code, os.strerror(self.code))
        return self.real(fd, data)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_failing_disk_leaves_no_torn_line_and_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to tell which file a write goes to")
    items = write_items(tmp_path / "items.jsonl", n_conv=4, n_turns=3)  # 24 items
    engine = ScriptedEngine(scripted_answer)
    monkeypatch.setattr(os, "write", _FailingDisk(fail_at=6, code=code))
    with pytest.raises(UserError) as err:
        _score(tmp_path, engine)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'run' / 'judgments.jsonl'}: cannot write: ")
    assert os.strerror(code).lower() in message.lower() or "read-only" in message
    run = tmp_path / "run"
    data = (run / "judgments.jsonl").read_bytes()
    assert data.endswith(b"\n") and data.count(b"\n") == 5  # 5 whole lines, the 6th cut off
    assert not list(run.glob("*.tmp")) and not (run / ".attune.lock").exists()
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    assert manifest["invocations"] == 0  # the failed invocation is not counted

    monkeypatch.undo()  # the disk is fixed
    result = _score(tmp_path, engine)
    assert result.complete and result.n_skipped == 5 and result.n_run == len(items) - 5
    judgments = read_jsonl(run / "judgments.jsonl", Judgment)  # strict: nothing torn
    assert Counter(j.item_id for j in judgments) == Counter(it.item_id for it in items)
    assert json.loads((run / "manifest.json").read_text("utf-8"))["invocations"] == 1


def test_a_read_only_summary_write_fails_cleanly_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["score", SAMPLES / "conversation_5.json", "--rubric", "length", "-o", out, "-q"]
    real = Path.write_text

    def read_only(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name == "summary.json.tmp":
            real(self, "partial")  # the temporary file exists when the write fails
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", read_only)
    code, err = _cli(capsys, *argv)
    assert code == 2
    assert err.strip() == (
        f"error: {out / 'summary.json'}: cannot write: read-only file system; nothing written "
        "is torn — fix the cause and run the same command again to resume"
    )
    assert not list(out.glob("*.tmp")) and not (out / ".attune.lock").exists()
    n_lines = (out / "judgments.jsonl").read_bytes().count(b"\n")
    assert n_lines > 0
    monkeypatch.undo()
    code, err = _cli(capsys, *argv)
    assert code == 0, err
    assert (out / "judgments.jsonl").read_bytes().count(b"\n") == n_lines  # nothing redone
    assert json.loads((out / "summary.json").read_text("utf-8"))["run"]["complete"]


# -- inputs that are not UTF-8 --------------------------------------------------------------


def _latin1(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("latin-1"))
    return path


def test_non_utf8_inputs_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    bad_data = _latin1(tmp_path / "conv.json", '{"id": "caf\xe9"}')
    code, err = _cli(capsys, "score", bad_data, "--rubric", "length", "-o", out, "-q")
    assert code == 2 and f"{bad_data}: not UTF-8 text (line 1: byte 0xe9" in err

    items = _latin1(tmp_path / "items.jsonl", '{"item_id": "a"}\n{"item_id": "caf\xe9"}\n')
    code, err = _cli(capsys, "score", items, "--rubric", "length", "-o", out, "-q")
    assert code == 2 and f"{items}: not UTF-8 text (line 2" in err

    cands = _latin1(tmp_path / "cands.jsonl", '{"model": "m\xe9"}\n')
    argv = ["score", SAMPLES / "conversation_5.json", "--candidates", cands]
    code, err = _cli(capsys, *argv, "--rubric", "length", "-o", tmp_path / "r2", "-q")
    assert code == 2 and f"{cands}: not UTF-8 text" in err

    rubric = _latin1(tmp_path / "rubric.yaml", "id: caf\xe9\n")
    argv = ["score", SAMPLES / "conversation_5.json", "--rubric", rubric]
    code, err = _cli(capsys, *argv, "-o", tmp_path / "r3", "-q")
    assert code == 2 and f"{rubric}: not UTF-8 text (line 1" in err

    item = _latin1(tmp_path / "item.json", '{"item_id": "caf\xe9"}')
    code, err = _cli(capsys, "judge", item, "--rubric", "length")
    assert code == 2 and f"{item}: not UTF-8 text" in err

    labels = _latin1(tmp_path / "labels.jsonl", '{"item_id": "caf\xe9"}\n')
    judge_file = tmp_path / "judge.jsonl"
    judge_file.write_text("", "utf-8")
    code, err = _cli(capsys, "calibrate", "--human", labels, "--judge", judge_file, "-o", out)
    assert code == 2 and f"{labels}: not UTF-8 text" in err

    variants = _latin1(tmp_path / "variants.yaml", "variants:\n  - name: caf\xe9\n")
    argv = ["sensitivity", SAMPLES / "conversation_5.json", "--variants", variants]
    code, err = _cli(capsys, *argv, "-o", tmp_path / "r4", "-q")
    assert code == 2 and f"{variants}: not UTF-8 text" in err


def test_run_dir_lock_is_reentrant_per_invocation_only(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    with run.lock():
        assert (tmp_path / "run" / ".attune.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(UserError, match=f"PID {os.getpid()}"), RunDir(tmp_path / "run").lock():
            pass
    assert not (tmp_path / "run" / ".attune.lock").exists()
    with run.lock():  # free again
        pass
