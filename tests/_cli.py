"""Running the CLI in-process in a test: exit code, stdout and stderr."""

from __future__ import annotations

import pytest

from attune_judge.cli import main


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``attune-judge ARGV`` in this process: (exit code, stdout, stderr)."""
    try:
        main(argv)
        code = 0
    except SystemExit as ex:
        code = int(ex.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err
