"""Rubric files: built-ins load by name, bad input is reported with file and field."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from attune_judge import shipped_dir
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric, available_rubrics, load_rubric, read_yaml, validate_mapping
from tests.conftest import DESIGN, REPO_ROOT

BUILT_IN = [
    "attune-empathy-anchored",
    "attunebench-behaviours",
    "attunebench-pairwise",
    "attunebench-reference",
]


def _write(tmp_path: Path, data: dict, name: str = "mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return path


def _minimal() -> dict:
    return {
        "id": "mine",
        "version": 1,
        "description": "d",
        "kind": "reference",
        "instructions": "Rate it.",
        "criteria": [
            {
                "id": "warmth",
                "name": "Warmth",
                "description": "w",
                "scale": {"min": 1, "max": 5},
                "anchors": {1: "cold", 5: "warm"},
            },
            {"id": "clarity", "name": "Clarity", "description": "c", "scale": {"min": 1, "max": 5}},
        ],
    }


def test_every_built_in_rubric_is_found_by_name() -> None:
    assert set(BUILT_IN) <= set(available_rubrics())
    for name in BUILT_IN:
        assert load_rubric(name).id == name


def test_attunebench_reference_matches_the_paper() -> None:
    rubric = load_rubric("attunebench-reference")
    assert [c.id for c in rubric.criteria] == [
        "overall_score",
        "emotional_appropriateness",
        "helpfulness",
        "tone_match",
    ]
    # every criterion has the paper's 1-7 scale (a missing scale must fail, not be skipped)
    assert [(c.scale.min, c.scale.max) if c.scale else None for c in rubric.criteria] == [
        (1, 7)
    ] * 4
    # mean of 7, 5, 4, 4 = 5; normalised (5 - 1) / 6 = 2/3
    overall, normalized = rubric.aggregate(
        {"overall_score": 7, "emotional_appropriateness": 5, "helpfulness": 4, "tone_match": 4}
    )
    assert overall == pytest.approx(5.0)
    assert normalized == pytest.approx(2 / 3)


def test_instrument_rubrics_cover_the_instrument() -> None:
    instrument = json.loads((DESIGN / "attunebench-instrument.json").read_text())
    behaviours = load_rubric("attunebench-behaviours")
    assert [c.id for c in behaviours.criteria] == [b["id"] for b in instrument["behavior_items"]]
    assert len(behaviours.criteria) == 36
    pairwise = load_rubric("attunebench-pairwise")
    assert {c.id: c.description for c in pairwise.criteria} == instrument["pairwise_questions"]


def test_own_rubric_anchors_every_level() -> None:
    rubric = load_rubric("attune-empathy-anchored")
    for c in rubric.criteria:
        assert c.scale is not None
        assert sorted(c.anchors) == list(range(c.scale.min, c.scale.max + 1))


def test_unknown_name_lists_the_available_ones() -> None:
    with pytest.raises(UserError) as err:
        load_rubric("attunebench-referense")
    assert "attunebench-referense" in str(err.value)
    for name in BUILT_IN:
        assert name in str(err.value)


def test_user_yaml_file_loads_like_a_built_in(tmp_path: Path) -> None:
    rubric = load_rubric(_write(tmp_path, _minimal()))
    assert rubric.version == "1"
    # mean 4 of (5, 3); normalised (4 - 1) / 4 = 0.75
    assert rubric.aggregate({"warmth": 5, "clarity": 3}) == (4.0, 0.75)


def test_misspelt_field_names_file_and_field(tmp_path: Path) -> None:
    data = _minimal()
    data["criteria"][0]["descripton"] = data["criteria"][0].pop("description")
    path = _write(tmp_path, data)
    with pytest.raises(UserError) as err:
        load_rubric(path)
    text = str(err.value)
    assert str(path) in text
    assert "criteria[0:warmth].descripton" in text
    assert "criteria[0:warmth].description" in text  # the missing required one


def test_scale_min_not_below_max_is_rejected(tmp_path: Path) -> None:
    data = _minimal()
    data["criteria"][1]["scale"] = {"min": 5, "max": 5}
    with pytest.raises(UserError) as err:
        load_rubric(_write(tmp_path, data))
    assert "criteria[1:clarity].scale" in str(err.value)
    assert "min (5) must be less than max (5)" in str(err.value)


def test_anchor_outside_scale_is_rejected(tmp_path: Path) -> None:
    data = _minimal()
    data["criteria"][0]["anchors"] = {0: "off the scale", 5: "warm"}
    with pytest.raises(UserError) as err:
        load_rubric(_write(tmp_path, data))
    assert "anchor levels [0] lie outside the scale 1..5" in str(err.value)


def test_weighted_aggregation_and_bad_weights(tmp_path: Path) -> None:
    data = _minimal()
    data["aggregation"] = {"method": "weighted", "weights": {"warmth": 3, "clarity": 1}}
    rubric = load_rubric(_write(tmp_path, data))
    # (3*5 + 1*1) / 4 = 4; normalised (3*1 + 1*0) / 4 = 0.75
    assert rubric.aggregate({"warmth": 5, "clarity": 1}) == (4.0, 0.75)
    data["aggregation"]["weights"] = {"warmth": 1}
    with pytest.raises(UserError, match="missing \\['clarity'\\]"):
        load_rubric(_write(tmp_path, data, "bad.yaml"))


def test_content_hash_follows_content_not_layout(tmp_path: Path) -> None:
    data = _minimal()
    reordered = dict(reversed(list(data.items())))
    a = load_rubric(_write(tmp_path, data, "a.yaml"))
    b = load_rubric(_write(tmp_path, reordered, "b.yaml"))
    assert a.content_hash == b.content_hash
    data["criteria"][0]["description"] = "changed"
    c = load_rubric(_write(tmp_path, data, "c.yaml"))
    assert c.content_hash != a.content_hash
    assert len(a.content_hash) == 64


def test_not_yaml_and_not_a_mapping(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [unclosed", "utf-8")
    with pytest.raises(UserError, match="not valid YAML"):
        load_rubric(bad)
    bad.write_text("- a list\n", "utf-8")
    with pytest.raises(UserError, match="must be a mapping"):
        load_rubric(bad)
    with pytest.raises(UserError, match="not found"):
        load_rubric(tmp_path / "missing.yaml")


def test_rubric_model_is_strict() -> None:
    with pytest.raises(ValueError, match="criterion id"):
        Rubric.model_validate(
            {
                **_minimal(),
                "criteria": [
                    {
                        "id": "has space",
                        "name": "n",
                        "description": "d",
                        "scale": {"min": 1, "max": 2},
                    }
                ],
            }
        )


def test_wheel_mapping_puts_rubrics_where_shipped_dir_looks() -> None:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert mapping["rubrics"] == "attune_judge/_shipped/rubrics"
    # shipped_dir looks at <package>/_shipped/<name> first, then the repository root
    assert shipped_dir("rubrics").resolve() == (REPO_ROOT / "rubrics").resolve()


@pytest.mark.slow
def test_built_wheel_contains_the_rubrics(tmp_path: Path) -> None:
    import subprocess
    import sys
    import zipfile

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    in_ci = os.environ.get("CI", "").lower() == "true"
    if out.returncode != 0 and "hatchling" in (out.stderr + out.stdout) and not in_ci:
        # the dev extra installs hatchling, so in CI this is a failure, not a skip
        pytest.skip("hatchling is not installed for an offline wheel build")
    assert out.returncode == 0, out.stderr
    wheel = next(tmp_path.glob("attune_judge-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in BUILT_IN:
        assert f"attune_judge/_shipped/rubrics/{name}.yaml" in names


def test_installed_layout_finds_built_in_rubrics_by_name(tmp_path: Path) -> None:
    """Lay the package out as the wheel mapping does and load a rubric from that copy."""
    import shutil
    import subprocess
    import sys

    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    site = tmp_path / "site" / "lib"
    shutil.copytree(
        REPO_ROOT / "src" / "attune_judge",
        site / "attune_judge",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copytree(REPO_ROOT / "rubrics", site / mapping["rubrics"])
    code = (
        "from attune_judge.rubrics import load_rubric;"
        "from attune_judge import shipped_dir;"
        "print(load_rubric('attunebench-reference').id); print(shipped_dir('rubrics'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "PATH": ""},
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rubric_id, folder = out.stdout.split()
    assert rubric_id == "attunebench-reference"
    assert Path(folder) == site / "attune_judge" / "_shipped" / "rubrics"


def test_validate_mapping_names_list_entries_by_their_key(tmp_path: Path) -> None:
    # the shared YAML validation used by rubrics and variants files: a list entry is named by
    # ``name_key`` and every problem is ``source: field: message``
    class Entry(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: str
        size: int

    class Doc(BaseModel):
        model_config = ConfigDict(extra="forbid")
        entries: list[Entry]

    data = {"entries": [{"name": "ok", "size": 1}, {"name": "big", "size": "x", "colour": 1}]}
    with pytest.raises(UserError) as err:
        validate_mapping(Doc, data, "d.yaml", "thing", name_key="name")
    assert err.value.message == "invalid thing d.yaml"
    assert sorted(err.value.problems) == [
        "d.yaml: entries[1:big].colour: unknown field (misspelt?)",
        "d.yaml: entries[1:big].size: Input should be a valid integer, unable to parse string "
        "as an integer",
    ]
    with pytest.raises(UserError, match=r"d\.yaml: a thing must be a mapping, got list"):
        validate_mapping(Doc, [], "d.yaml", "thing")
    with pytest.raises(UserError, match="thing file not found"):
        read_yaml(tmp_path / "missing.yaml", "thing file")
    # without a name key a list entry is named by its position
    with pytest.raises(UserError) as err:
        validate_mapping(Doc, {"entries": [{"name": "a", "size": "x"}]}, "d.yaml", "thing")
    assert [p.split(":")[:2] for p in err.value.problems] == [["d.yaml", " entries[0].size"]]
