"""``attune-judge rubric list | show | check``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from attune_judge.cli import main
from tests.conftest import REPO_ROOT


def _cli(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    return int(stop.value.code or 0)


def test_list_names_every_shipped_rubric(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["rubric", "list"]) == 0
    out = capsys.readouterr().out
    shipped = sorted(p.stem for p in (REPO_ROOT / "rubrics").glob("*.yaml"))
    assert [line.split()[0] for line in out.splitlines()] == shipped
    assert "attunebench-behaviours" in out and " behaviour " in out


def test_show_prints_criteria_anchors_and_the_hash(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["rubric", "show", "attunebench-reference"]) == 0
    out = capsys.readouterr().out
    data = yaml.safe_load((REPO_ROOT / "rubrics" / "attunebench-reference.yaml").read_text())
    for c in data["criteria"]:
        assert f"- {c['id']}: " in out
    assert "7: As good as or better than the reference" in out
    assert "scale 1..7" in out


def test_check_a_valid_file_prints_version_and_content_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = REPO_ROOT / "rubrics" / "attunebench-pairwise.yaml"
    assert _cli(["rubric", "check", str(path)]) == 0
    out = capsys.readouterr().out
    data = yaml.safe_load(path.read_text())
    # the hash of the validated record's canonical JSON (defaults filled, as recorded in runs)
    from attune_judge.rubrics import load_rubric

    record = load_rubric(path).model_dump(mode="json")
    assert record.pop("scale") is None  # unset later fields are not part of the identity
    for c in record["criteria"]:
        assert c.pop("polarity") is None
    canonical = json.dumps(
        record,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    assert f"hash: sha256:{hashlib.sha256(canonical.encode()).hexdigest()}" in out
    assert f"version: {data['version']}" in out and "valid rubric" in out


def test_check_an_anchor_outside_the_scale_exits_2_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = yaml.safe_load((REPO_ROOT / "rubrics" / "attunebench-reference.yaml").read_text())
    data["criteria"][1]["anchors"][9] = "off the scale"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    assert _cli(["rubric", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "criteria[1:emotional_appropriateness]" in err
    assert "outside the scale 1..7" in err and "Traceback" not in err
