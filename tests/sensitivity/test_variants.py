"""The variants file schema, the perturbation functions and variant resolution."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from attune_judge import shipped_dir
from attune_judge.errors import UserError
from attune_judge.judges import JudgeOptions, build_judge
from attune_judge.rubrics import Scale, load_rubric
from attune_judge.sensitivity import load_variants, resolve_variants

# private unit: each rubric perturbation and the variants-file parser
from attune_judge.sensitivity._perturb import (
    change_scale,
    drop_anchors,
    paraphrase_criteria,
    remove_criterion,
    rescale_level,
    shuffle_criteria,
)
from attune_judge.sensitivity._variants import parse_variants
from attune_judge.testing import ScriptedEngine

RUBRIC = load_rubric("attunebench-reference")
IDS = ["overall_score", "emotional_appropriateness", "helpfulness", "tone_match"]


def _spec(**extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": "s",
        "perturbations": [
            {"name": "shuffled", "kind": "shuffle_criteria", "seed": 1},
            {"name": "s5", "kind": "change_scale", "max": 5},
            {"name": "s10", "kind": "change_scale", "max": 10, "anchors": "drop"},
            {"name": "judge2", "kind": "judge_model", "lm": "openai/other"},
        ],
    }
    spec.update(extra)
    return spec


def _problems(data: Any) -> list[str]:
    with pytest.raises(UserError) as info:
        parse_variants(data, "v.yaml")
    return info.value.problems


def test_unknown_field_is_named_with_file_and_path() -> None:
    spec = _spec()
    spec["perturbations"][0]["sed"] = 2
    assert _problems(spec) == ["v.yaml: perturbations[0:shuffled].sed: unknown field (misspelt?)"]


def test_bad_kind_and_missing_field_are_reported() -> None:
    spec = _spec()
    spec["perturbations"][1] = {"name": "s5", "kind": "change_scale"}
    spec["perturbations"].append({"name": "x", "kind": "translate"})
    problems = _problems(spec)
    assert "v.yaml: perturbations[1:s5].max: Field required" in problems
    assert any(
        p.startswith("v.yaml: perturbations[4:x]: Input tag 'translate' found using 'kind'")
        for p in problems
    )


def test_cross_references_are_checked() -> None:
    assert any(
        "applies unknown perturbation(s) ['nope']" in p
        for p in _problems(_spec(variants=[{"name": "v", "apply": ["nope"]}]))
    )
    assert any(
        "'factors' are only used" in p
        for p in _problems(_spec(factors=[{"name": "f", "levels": ["s5"]}]))
    )
    assert any(
        "reserved" in p for p in _problems(_spec(variants=[{"name": "base", "apply": ["s5"]}]))
    )
    bad = _spec(
        full_factorial=True,
        factors=[{"name": "a", "levels": ["s5"]}, {"name": "b", "levels": ["s5"]}],
    )
    assert any("is a level of factors 'a' and 'b'" in p for p in _problems(bad))


def test_combinations_one_at_a_time_explicit_and_full_factorial() -> None:
    assert [n for n, _ in parse_variants(_spec(), "v").combinations()] == [
        "shuffled",
        "s5",
        "s10",
        "judge2",
    ]
    explicit = parse_variants(_spec(variants=[{"name": "both", "apply": ["shuffled", "s5"]}]), "v")
    assert explicit.combinations() == [("both", ["shuffled", "s5"])]
    ff = parse_variants(
        _spec(
            full_factorial=True,
            factors=[
                {"name": "scale", "levels": ["s5", "s10"]},
                {"name": "lm", "levels": ["judge2"]},
            ],
        ),
        "v",
    )
    # (1 + 2) x (1 + 1) = 6 cells, minus the all-base cell = 5 variants
    assert ff.combinations() == [
        ("judge2", ["judge2"]),
        ("s5", ["s5"]),
        ("s5+judge2", ["s5", "judge2"]),
        ("s10", ["s10"]),
        ("s10+judge2", ["s10", "judge2"]),
    ]


def test_load_variants_reports_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="variants file not found"):
        load_variants(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed", "utf-8")
    with pytest.raises(UserError, match="not valid YAML"):
        load_variants(bad)


def test_shipped_example_resolves_to_distinct_rubrics_and_judges() -> None:
    spec = load_variants(
        shipped_dir("rubrics") / "variants" / "attunebench-reference-variants.yaml"
    )
    variants = resolve_variants(spec, RUBRIC, lm="scripted/judge")
    assert variants[0].name == "base" and variants[0].rubric == RUBRIC
    lm = ScriptedEngine(["{}"]).lm()
    ids = {
        v.name: build_judge(
            v.rubric, lm, JudgeOptions(use_reference=v.use_reference, reasoning=v.reasoning)
        ).judge_id
        for v in variants
    }
    assert len(set(ids.values())) == len(variants)  # every variant is its own judge
    for v in variants[1:]:
        same_rubric = v.kinds == ("reasoning",)  # a judge option, not a rubric change
        assert (v.rubric.content_hash == RUBRIC.content_hash) is same_rubric, v.name
    no_ref = next(v for v in variants if v.name == "no-reference")
    assert no_ref.use_reference is False and "reference" not in no_ref.rubric.instructions


def test_shuffle_changes_order_only_and_the_hash() -> None:
    out = shuffle_criteria(RUBRIC, seed=1, tag="shuffled")
    assert sorted(c.id for c in out.criteria) == sorted(IDS)
    assert [c.id for c in out.criteria] != IDS
    assert out.content_hash != RUBRIC.content_hash
    assert out.version == "1+shuffled" and out.id == RUBRIC.id
    assert {c.id: c for c in out.criteria} == {c.id: c for c in RUBRIC.criteria}
    assert shuffle_criteria(RUBRIC, seed=1).criteria == out.criteria  # seeded


def test_rescaled_anchors_land_on_hand_computed_levels() -> None:
    # 1..7 -> 1..5: l' = 1 + (l - 1) * 4/6: 1 -> 1, 4 -> 3, 7 -> 5
    five = change_scale(RUBRIC, 1, 5)
    assert sorted(five.criterion("overall_score").anchors) == [1, 3, 5]
    assert five.criterion("overall_score").scale == Scale(min=1, max=5)
    # 1..7 -> 1..10: 1 -> 1, 4 -> 1 + 3 * 9/6 = 5.5 -> 6 (half up), 7 -> 10
    ten = change_scale(RUBRIC, 1, 10)
    assert sorted(ten.criterion("tone_match").anchors) == [1, 6, 10]
    assert "from 1 to 10" in ten.instructions and "from 1 to 7" not in ten.instructions
    assert change_scale(RUBRIC, 1, 10, anchors="drop").criterion("helpfulness").anchors == {}
    assert rescale_level(4, Scale(min=1, max=7), Scale(min=1, max=10)) == pytest.approx(5.5)


def test_colliding_anchors_keep_the_closest_level() -> None:
    data = RUBRIC.model_dump()
    for c in data["criteria"]:
        c["anchors"] = {1: "one", 2: "two", 3: "three", 7: "seven"}
    rubric = type(RUBRIC).model_validate(data)
    # to 1..3: exact positions 1, 1.33, 1.67, 3 -> 1, 1, 2, 3: 'one' (distance 0) keeps 1
    out = change_scale(rubric, 1, 3)
    assert out.criterion("overall_score").anchors == {1: "one", 2: "three", 3: "seven"}


def test_remove_paraphrase_and_drop_anchors() -> None:
    out = remove_criterion(RUBRIC, "helpfulness")
    assert [c.id for c in out.criteria] == [
        "overall_score",
        "emotional_appropriateness",
        "tone_match",
    ]
    with pytest.raises(UserError, match="has no criterion 'nope'"):
        remove_criterion(RUBRIC, "nope")
    para = paraphrase_criteria(RUBRIC, {"tone_match": "New words."})
    assert para.criterion("tone_match").description == "New words."
    assert para.criterion("tone_match").anchors == RUBRIC.criterion("tone_match").anchors
    with pytest.raises(UserError, match="has no criterion 'x'"):
        paraphrase_criteria(RUBRIC, {"x": "y"})
    bare = drop_anchors(RUBRIC)
    assert all(not c.anchors for c in bare.criteria)
    assert bare.content_hash != RUBRIC.content_hash


def test_resolution_rejects_two_perturbations_of_one_kind() -> None:
    spec = parse_variants(_spec(variants=[{"name": "v", "apply": ["s5", "s10"]}]), "v.yaml")
    with pytest.raises(UserError, match="two perturbations of kind 'change_scale'"):
        resolve_variants(spec, RUBRIC, source="v.yaml")


def test_judge_model_variant_keeps_the_rubric_and_sets_factors() -> None:
    spec = parse_variants(_spec(variants=[{"name": "v", "apply": ["s5", "judge2"]}]), "v.yaml")
    base, v = resolve_variants(spec, RUBRIC, lm="local")
    assert base.lm == "local" and v.lm == "openai/other"
    assert v.rubric_condition == "s5" and v.judge_label == "openai/other"
    assert base.rubric_condition == "base" and base.judge_label == "local"


def test_unknown_criterion_in_a_perturbation_names_file_and_variant(tmp_path: Path) -> None:
    path = tmp_path / "v.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "s",
                "perturbations": [{"name": "d", "kind": "remove_criterion", "criterion": "zz"}],
            }
        ),
        "utf-8",
    )
    spec = load_variants(path)
    with pytest.raises(UserError, match=r"v\.yaml: variant 'd': perturbation 'd': .* 'zz'"):
        resolve_variants(spec, RUBRIC, source=str(path))


def test_only_keeps_the_base_and_the_named_variants() -> None:
    spec = parse_variants(_spec(), "v.yaml")
    names = [v.name for v in resolve_variants(spec, RUBRIC, only=["s10"], source="v.yaml")]
    assert names == ["base", "s10"]
    with pytest.raises(UserError, match=r"v\.yaml: no variant named 'nope'"):
        resolve_variants(spec, RUBRIC, only=["nope"], source="v.yaml")


def test_perturbation_and_variant_names_are_checked() -> None:
    spec = _spec(variants=[{"name": "-v", "apply": ["s5"]}])
    spec["perturbations"][0] = {"name": "a b", "kind": "shuffle_criteria"}
    problems = _problems(spec)
    assert any(
        "perturbations[0" in p and "name 'a b' must start with a letter" in p for p in problems
    )
    assert any("variants[0" in p and "name '-v' must start with a letter" in p for p in problems)
