"""``attune-judge sensitivity``: user errors become one-line messages and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from attune_judge.cli import main
from tests.sensitivity._scripted import write_items


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return int(info.value.code or 0), capsys.readouterr().err


def test_invalid_variants_file_exits_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "items.jsonl"
    write_items(data, n_conv=2, n_turns=1)
    variants = tmp_path / "v.yaml"
    variants.write_text(
        yaml.safe_dump(
            {"name": "s", "perturbations": [{"name": "p", "kind": "change_scale", "mx": 5}]}
        ),
        "utf-8",
    )
    code, err = _run(
        ["sensitivity", str(data), "--variants", str(variants), "-o", str(tmp_path / "run")],
        capsys,
    )
    assert code == 2
    assert err.startswith(f"error: invalid variants file {variants}")
    assert f"{variants}: perturbations[0:p].mx: unknown field (misspelt?)" in err
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()


def test_unknown_rubric_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "items.jsonl"
    write_items(data, n_conv=2, n_turns=1)
    variants = tmp_path / "v.yaml"
    variants.write_text(
        yaml.safe_dump({"name": "s", "perturbations": [{"name": "p", "kind": "drop_anchors"}]}),
        "utf-8",
    )
    code, err = _run(
        [
            "sensitivity",
            str(data),
            "--variants",
            str(variants),
            "--rubric",
            "no-such-rubric",
            "-o",
            str(tmp_path / "run"),
        ],
        capsys,
    )
    assert code == 2 and "unknown rubric 'no-such-rubric'" in err
    code, err = _run(
        ["sensitivity", str(data), "--variants", str(variants), "-o", str(tmp_path / "run")],
        capsys,
    )
    assert code == 2 and "no base rubric" in err
