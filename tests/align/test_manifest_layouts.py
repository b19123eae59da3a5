"""The aligned judge's manifest is typed: every layout it was written in loads, and a file
with a wrong field is refused naming the file and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from attune_judge.align import read_manifest
from attune_judge.data._aligned import (
    AlignedJudgeManifest,
    CalibratedHeldOut,
    CalibrateSettings,
    HeldOutSummary,
    OptimizerSettings,
)
from attune_judge.errors import UserError

ROOT = Path(__file__).resolve().parents[2] / "calibration" / "heads"

# The first layout (issue 15, Dec 1): held_out without the length and position baselines,
# written here by hand from that version's writer, not by the current code.
FIRST_LAYOUT = {
    "format": "attune-aligned-judge/1",
    "rubric": {"id": "empathic-communication", "version": "1", "content_hash": "ab12"},
    "judge_program": "reference",
    "judge_options": {"reasoning": False, "use_reference": True},
    "lm": "openai/gpt-4o-mini",
    "lm_spec": {"lm": "openai/gpt-4o-mini", "temperature": 0.0, "max_tokens": 1024, "seed": 0},
    "optimizer": {
        "name": "bootstrap-fewshot",
        "max_labeled_demos": 4,
        "max_bootstrapped_demos": 4,
        "num_candidates": 4,
        "metric_threshold": 0.9,
        "gepa_metric_calls": None,
        "num_threads": 1,
        "seed": 0,
    },
    "metric": "ordinal",
    "split": {
        "seed": 0,
        "fractions": [0.4, 0.2, 0.4],
        "conversations": {"train": 8, "dev": 4, "test": 8},
        "items": {"train": 16, "dev": 8, "test": 16},
        "file": "split.json",
    },
    "source": "empathic-communication-epitome",
    "held_out": {
        "metric": "ordinal",
        "n_items": 16,
        "before": 0.61,
        "after": 0.7,
        "after_mapped": None,
        "improvement": 0.09,
        "improvement_lower": -0.02,
        "improvement_upper": 0.2,
        "distinguishable": False,
        "verdict": "not distinguishable",
    },
    "score_map": None,
    "program_sha256": "0" * 64,
    "artifact_hash": "1" * 16,
    "calls": {"optimizer": 40, "evaluation": 32},
    "created_at": "2026-12-01T08:31:54+00:00",
    "versions": {"attune-judge": "0.1.0"},
}


def test_the_first_layout_loads_and_dumps_unchanged_but_for_the_new_baselines() -> None:
    m = AlignedJudgeManifest.model_validate(FIRST_LAYOUT)
    assert isinstance(m.held_out, HeldOutSummary)
    assert isinstance(m.optimizer, OptimizerSettings)
    assert m.held_out.length_baseline is None and m.held_out.position_baseline is None
    assert m.split.conversations == {"train": 8, "dev": 4, "test": 8}
    dumped = json.loads(m.model_dump_json())
    added = dumped["held_out"].pop("length_baseline"), dumped["held_out"].pop("position_baseline")
    assert added == (None, None)
    assert dumped == FIRST_LAYOUT


@pytest.mark.parametrize("name", sorted(p.parent.name for p in ROOT.glob("*/aligned-judge.json")))
def test_every_shipped_calibrated_manifest_round_trips(name: str) -> None:
    raw = json.loads((ROOT / name / "aligned-judge.json").read_text(encoding="utf-8"))
    m = AlignedJudgeManifest.model_validate(raw)
    assert isinstance(m.optimizer, CalibrateSettings)
    assert isinstance(m.held_out, CalibratedHeldOut)
    # the systems stay flat keys of held_out, each typed as metric -> value
    systems = m.held_out.model_extra or {}
    assert "calibrated" in systems and set(systems["calibrated"]) >= {"rmse", "spearman"}
    assert json.loads(m.model_dump_json()) == raw


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("optimizer", "name"), "annealing", "optimizer"),
        (("split", "seed"), "zero", "split.seed"),
        (("judge_options", "reasoning"), "maybe", "judge_options.reasoning"),
        (("held_out", "before"), "high", "held_out"),
    ],
)
def test_a_wrong_field_is_refused_naming_the_file_and_field(
    tmp_path: Path, path: tuple[str, str], value: object, field: str
) -> None:
    bad = copy.deepcopy(FIRST_LAYOUT)
    bad[path[0]][path[1]] = value  # type: ignore[index]
    (tmp_path / "aligned-judge.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(UserError) as err:
        read_manifest(tmp_path)
    assert "aligned-judge.json: field " + field in str(err.value)


def test_a_calibrated_system_must_be_metric_values() -> None:
    with pytest.raises(ValueError, match="calibrated"):
        CalibratedHeldOut.model_validate({"verdict": "v", "n_items": 3, "calibrated": "good"})
