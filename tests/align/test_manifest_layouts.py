"""The aligned judge's manifest is typed: every layout it was written in loads, and a file
with a wrong field is refused naming the file and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from attune_judge.align import OptimizerSettings, read_manifest
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


def _read(root: Path, layout: dict[str, Any]) -> Any:
    """``align.read_manifest`` of an aligned judge directory holding only this manifest."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "aligned-judge.json").write_text(json.dumps(layout), encoding="utf-8")
    return read_manifest(root)


def test_the_first_layout_loads_and_dumps_unchanged_but_for_the_new_baselines(
    tmp_path: Path,
) -> None:
    m = _read(tmp_path, FIRST_LAYOUT)
    assert isinstance(m.optimizer, OptimizerSettings) and m.optimizer.metric_threshold == 0.9
    # the optimizers' held-out summary, typed: its fields, the new baselines unset
    assert (m.held_out.before, m.held_out.after, m.held_out.distinguishable) == (0.61, 0.7, False)
    assert m.held_out.length_baseline is None and m.held_out.position_baseline is None
    assert m.held_out.model_extra in (None, {})
    assert m.split.conversations == {"train": 8, "dev": 4, "test": 8}
    dumped = json.loads(m.model_dump_json())
    added = dumped["held_out"].pop("length_baseline"), dumped["held_out"].pop("position_baseline")
    assert added == (None, None)
    assert dumped == FIRST_LAYOUT


@pytest.mark.parametrize("name", sorted(p.parent.name for p in ROOT.glob("*/aligned-judge.json")))
def test_every_shipped_calibrated_manifest_round_trips(name: str) -> None:
    raw = json.loads((ROOT / name / "aligned-judge.json").read_text(encoding="utf-8"))
    m = read_manifest(ROOT / name)
    # the calibration head's settings and held-out systems, not an optimizer's
    assert not isinstance(m.optimizer, OptimizerSettings)
    assert m.optimizer.name == "calibrate" and m.optimizer.penalty_grid
    assert not hasattr(m.held_out, "before") and m.held_out.n_items > 0
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
    with pytest.raises(UserError) as err:
        _read(tmp_path, bad)
    assert "aligned-judge.json: field " + field in str(err.value)


def test_a_calibrated_system_must_be_metric_values(tmp_path: Path) -> None:
    name = sorted(p.parent.name for p in ROOT.glob("*/aligned-judge.json"))[0]
    raw = json.loads((ROOT / name / "aligned-judge.json").read_text(encoding="utf-8"))
    assert _read(tmp_path / "as-shipped", raw).held_out.model_extra["calibrated"]
    raw["held_out"]["calibrated"] = "good"  # the one change: a system that is not metrics
    with pytest.raises(UserError, match=r"aligned-judge\.json: field held_out"):
        _read(tmp_path / "changed", raw)
