"""DUO adapter on the real files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.data.adapters import AdapterResult, convert_duo
from attune_judge.errors import UserError
from tests.conftest import DATASETS

SRC = DATASETS / "duo"
pytestmark = pytest.mark.skipif(not SRC.is_dir(), reason="shared datasets not present")


@pytest.fixture(scope="module")
def result() -> AdapterResult:
    return convert_duo(SRC)


@pytest.fixture(scope="module")
def raw() -> dict[str, list[dict]]:
    return {
        lang: [json.loads(p.read_text("utf-8")) for p in sorted((SRC / "ed" / lang).glob("*"))]
        for lang in ("en", "ja")
    }


def test_counts(result: AdapterResult, raw: dict[str, list[dict]]) -> None:
    # expected from the raw JSON: 4 participant ratings per dialogue + 3 observers x 4 dims for
    # each dialogue with an objective_evaluation (en: 157 files, 50 with observers -> 628 + 600;
    # ja: 68 files, 45 with observers -> 272 + 540)
    n_obs = {k: sum(1 for d in v if d.get("objective_evaluation")) for k, v in raw.items()}
    assert n_obs == {"en": 50, "ja": 45}
    assert len(result.items) == 157 + 68
    by_group = Counter(r.rater_group for r in result.ratings)
    assert by_group == {"participant": 4 * (157 + 68), "observers": 12 * (50 + 45)}
    assert result.report is not None
    assert result.report.counts["en_dialogues_with_observers"] == 50
    # the README's figure (70) disagrees with the files (50); the report says so
    assert any("70" in n and "50" in n for n in result.report.notes)


def test_unmatched_dialogues_reported(result: AdapterResult, raw: dict[str, list[dict]]) -> None:
    assert result.report is not None
    listed = result.report.unmatched["en: dialogues without observer ratings"]
    expected = [
        f"duo:en:{d['dialogue_id']}" for d in raw["en"] if not d.get("objective_evaluation")
    ]
    assert listed == expected and len(listed) == 107
    assert len(result.report.unmatched["ja: dialogues without observer ratings"]) == 23
    assert "observer mean differs from its scores" not in result.report.unmatched


def test_values_and_metadata(result: AdapterResult) -> None:
    # duo/ed/en/0000.json: participant preference 1.0; observers' preference scores [3, 4, 4]
    v = {(r.item_id, r.rater, r.dimension): r for r in result.ratings}
    assert v[("duo:en:0000", "participant", "preference")].value == 1.0
    assert [v[("duo:en:0000", f"observer{k}", "preference")].value for k in (1, 2, 3)] == [
        3.0,
        4.0,
        4.0,
    ]
    r = v[("duo:en:0000", "participant", "empathy")]
    assert r.metadata["model"] == "gpt-4o" and r.metadata["style_prompt"] == "neutral"
    assert r.cluster == "duo:en:0000"
    assert result.report is not None
    for rng in result.report.value_ranges.values():
        assert 1.0 <= rng["min"] <= rng["max"] <= 5.0


def test_items(result: AdapterResult, raw: dict[str, list[dict]]) -> None:
    items = {i.item_id: i for i in result.items}
    # Japanese files carry a numeric dialogue_id (2000); ids are text, zero-padded
    assert "duo:ja:2000" in items
    first = items["duo:en:0000"]
    d0 = raw["en"][0]
    assert first.candidate_model == "gpt-4o"
    assert first.context[0].content == d0["dialogue"][0]["message"]
    assert first.candidate == d0["dialogue"][-1]["message"].strip()
    n_msgs = sum(1 for _ in first.context) + 1
    assert n_msgs == len(d0["dialogue"])  # 20 alternating messages, none merged
    models = Counter((i.candidate_model, i.metadata["style_prompt"]) for i in result.items)
    assert models[("Llama-3.1-70B-Instruct", "not_aligned")] == 28
    assert models[("gpt-4o", "neutral")] == 31 + 23  # 31 English + 23 Japanese


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        convert_duo(tmp_path / "missing")


def test_participants(result: AdapterResult) -> None:
    # the DUO README: 34 English and 52 Japanese participants (ED setting)
    assert result.report is not None
    assert result.report.counts["en_participants"] == 34
    assert result.report.counts["ja_participants"] == 52
    assert all(r.metadata["participant_id"] for r in result.ratings)
