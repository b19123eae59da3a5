"""DUO adapter on real files (a sample of the dataset in tests/fixtures)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.data.adapters import AdapterResult, convert_duo
from attune_judge.errors import UserError
from tests.conftest import DATASETS

SRC = DATASETS / "duo"


@pytest.fixture(scope="module")
def result() -> AdapterResult:
    return convert_duo(SRC)


@pytest.fixture(scope="module")
def raw() -> dict[str, list[dict]]:
    return {
        lang: [json.loads(p.read_text("utf-8")) for p in sorted((SRC / "ed" / lang).glob("*"))]
        for lang in ("en", "ja")
    }


def _has_observers(d: dict) -> bool:
    return bool(d.get("objective_evaluation"))


def test_counts(result: AdapterResult, raw: dict[str, list[dict]]) -> None:
    # expected from the raw JSON: 4 participant ratings per dialogue + 3 observers x 4 dims for
    # each dialogue with an objective_evaluation (the fixture: 24 English dialogues, 12 with
    # observers; 12 Japanese, 6 with observers; the full data: 157 and 68, 50 and 45)
    n = {k: len(v) for k, v in raw.items()}
    n_obs = {k: sum(_has_observers(d) for d in v) for k, v in raw.items()}
    assert n == {"en": 24, "ja": 12} and n_obs == {"en": 12, "ja": 6}
    assert len(result.items) == n["en"] + n["ja"]
    by_group = Counter(r.rater_group for r in result.ratings)
    assert by_group == {
        "participant": sum(len(d["subjective_evaluation"]) for v in raw.values() for d in v),
        "observers": 12 * (n_obs["en"] + n_obs["ja"]),
    }
    assert by_group["participant"] == 4 * (n["en"] + n["ja"])
    assert result.report is not None
    assert result.report.counts["en_dialogues_with_observers"] == n_obs["en"]
    # the README's figure (70) is compared with what the files hold; the report says so
    assert any(
        "README says 70" in x and f"files hold {n_obs['en']}" in x for x in result.report.notes
    )


def test_unmatched_dialogues_reported(result: AdapterResult, raw: dict[str, list[dict]]) -> None:
    assert result.report is not None
    for lang in ("en", "ja"):
        listed = result.report.unmatched[f"{lang}: dialogues without observer ratings"]
        expected = [
            f"duo:{lang}:{str(d['dialogue_id']).zfill(4)}"
            for d in raw[lang]
            if not _has_observers(d)
        ]
        assert listed == expected and len(listed) > 0
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
    expected = Counter((d["model"], d["prompt"]) for v in raw.values() for d in v)
    assert models == expected
    # the fixture holds 4 dialogues per (model, style) cell in English, 4 per style in Japanese
    assert models[("Llama-3.1-70B-Instruct", "not_aligned")] == 4
    assert models[("gpt-4o", "neutral")] == 4 + 4


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        convert_duo(tmp_path / "missing")


def test_participants(result: AdapterResult, raw: dict[str, list[dict]]) -> None:
    # one participant per dialogue (its user_id); on the full data these counts are the DUO
    # README's 34 English and 52 Japanese participants (ED setting)
    assert result.report is not None
    for lang, dialogues in raw.items():
        users = {
            next(str(t["user_id"]) for t in d["dialogue"] if "user_id" in t) for d in dialogues
        }
        assert result.report.counts[f"{lang}_participants"] == len(users)
    assert all(r.metadata["participant_id"] for r in result.ratings)
