"""``attune-judge demo`` and ``attune-judge validate`` through the real entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from attune_judge.cli import main


def test_demo_part_b(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--parts", "b", "--B", "50", "-o", str(out)])
    assert exc.value.code == 0
    printed = capsys.readouterr().out
    assert "b. DUO" in printed
    assert f"report: {out / 'report.md'} and report.html" in printed
    assert (
        (out / "report.md")
        .read_text()
        .startswith("# attune-judge demo: validating judges on real human labels")
    )
    assert "data:image/png;base64," in (out / "report.html").read_text()


def test_demo_unknown_part_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--parts", "a,e", "-o", str(tmp_path)])
    assert exc.value.code == 2
    assert "available: a, b, c, d" in capsys.readouterr().err


def test_validate_unknown_set_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--lm", "local", "--set", "nope", "-o", str(tmp_path)])
    assert exc.value.code == 2
    assert "unknown set 'nope'" in capsys.readouterr().err
