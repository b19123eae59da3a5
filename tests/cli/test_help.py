import subprocess
import sys


def test_help_lists_commands_and_exits_zero() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "attune_judge", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "version" in out.stdout


def test_unknown_command_exits_two() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "attune_judge", "no-such-command"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
