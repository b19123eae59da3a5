"""empathic-communication adapter on the real files (Kumar et al. 2025 replication data)."""

from __future__ import annotations

import csv
import shutil
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.data.adapters import AdapterResult, convert_empathic_communication
from attune_judge.errors import UserError
from tests.conftest import DATASETS

SRC = DATASETS / "empathic-communication"


@pytest.fixture(scope="module")
def result() -> AdapterResult:
    return convert_empathic_communication(SRC)


def _csv_rows(path: Path) -> int:
    with path.open(encoding="utf-8", newline="") as fh:
        return sum(1 for _ in csv.reader(fh)) - 1


def test_counts_match_raw_rows(result: AdapterResult) -> None:
    # expected: for each source folder, each of the 7 rater files has N data rows (counted
    # with the csv module, which handles the multi-line Gemini texts) times the number of
    # dimension columns of that source (3 + 3 + 9 + 6), plus 6 seeker self-ratings for each
    # of the 50 Perceived Empathy conversations.
    dims = {"empatheticdialogues": 3, "epitome": 3, "perceived_empathy": 9, "lend_an_ear": 6}
    raters = ("expert1", "expert2", "expert3", "crowd", "gpt", "claude", "gemini")
    expected = 0
    for source, n_dims in dims.items():
        for rater in raters:
            expected += _csv_rows(SRC / "annotations" / source / f"{rater}_ratings.csv") * n_dims
    expected += 50 * 6
    assert expected == 7 * 50 * 21 + 300  # 50 rows per file everywhere
    assert len(result.ratings) == expected
    by_rater = Counter((r.rater, r.rater_group) for r in result.ratings)
    assert by_rater[("expert1", "experts")] == 50 * 21
    assert by_rater[("gemini", "llm")] == 50 * 21
    assert by_rater[("crowd", "crowd")] == 50 * 21
    assert by_rater[("seeker", "participant")] == 300
    assert {g for _, g in by_rater} == {"experts", "crowd", "llm", "participant"}


def test_header_names_not_positions(result: AdapterResult) -> None:
    # the column order of the dimensions differs between files; values read by hand:
    # epitome/gpt_ratings.csv row "0,41g07l,0.0,1.0,0.0" with header
    # ",sp_id,level_emotional_reactions,level_explorations,level_interpretations"
    # epitome/expert1 41g07l from the combined CSV: reactions 1, interpretations 1, explorations 2
    # empatheticdialogues/expert2: "hit:401_conv:803,2,3,4" (empathy, relevance, fluency)
    v = {(r.item_id, r.rater, r.dimension): r.value for r in result.ratings}
    assert v[("epitome:41g07l", "gpt", "level_explorations")] == 1.0
    assert v[("epitome:41g07l", "gpt", "level_interpretations")] == 0.0
    assert v[("epitome:41g07l", "expert1", "level_explorations")] == 2.0
    assert v[("empatheticdialogues:hit:401_conv:803", "expert2", "relevance")] == 3.0
    assert v[("empatheticdialogues:hit:401_conv:803", "expert2", "fluency")] == 4.0
    # crowd means keep their fractions: lend_an_ear/crowd_ratings.csv first row
    assert v[("lend_an_ear:20241031124050492385", "crowd", "validating_emotions")] == (
        pytest.approx(2.6666666666666665)
    )


def test_no_unmatched_ids_and_cross_check(result: AdapterResult) -> None:
    report = result.report
    assert report is not None
    assert all(v == [] for v in report.unmatched.values()), {
        k: v for k, v in report.unmatched.items() if v
    }
    # combined CSV: 400 rows = 50 x 8 methods; 7 methods compared per value over 21 dims
    assert report.counts["combined_values_checked"] == 7 * 50 * 21
    assert report.counts["combined_expert_medians_checked"] == 50 * 21


def test_every_rater_rates_the_same_conversations(result: AdapterResult) -> None:
    per: dict[tuple[str, str], set[str]] = {}
    for r in result.ratings:
        per.setdefault((r.metadata["source"], r.rater), set()).add(r.item_id)
    for (source, rater), ids in per.items():
        assert ids == per[(source, "expert1")], (source, rater)
        assert len(ids) == 50


def test_value_ranges_within_declared_scales(result: AdapterResult) -> None:
    assert result.report is not None
    ranges = result.report.value_ranges
    assert len(ranges) == 21
    assert ranges["level_explorations"]["scale_min"] == 0
    assert ranges["level_explorations"]["scale_max"] == 2
    assert ranges["m_understood"]["scale_max"] == 7
    for dim, rng in ranges.items():
        assert rng["scale_min"] <= rng["min"] <= rng["max"] <= rng["scale_max"], dim
        assert rng["missing"] == 0
    experts = [r.value for r in result.ratings if r.rater_group == "experts"]
    assert all(isinstance(x, float) and x.is_integer() for x in experts)


def test_items_where_text_is_public(result: AdapterResult) -> None:
    sources = Counter(i.metadata["source"] for i in result.items)
    assert sources == {"empatheticdialogues": 50, "epitome": 50, "lend_an_ear": 50}
    assert all(not i.item_id.startswith("perceived_empathy") for i in result.items)
    items = {i.item_id: i for i in result.items}
    ed = items["empatheticdialogues:hit:401_conv:803"]
    # from original_data/sample_empatheticdialogues.csv: the situation prompt is shown as the
    # seeker's first message, "_comma_" stands for ","
    assert ed.context[0].role == "user"
    assert ed.context[0].content.startswith("The result of my final college exams")
    assert "next day,I could" in ed.context[0].content
    assert ed.candidate == "That's awesome! It can be nerve racking"
    for item in result.items:
        text = item.candidate + "".join(m.content for m in item.context)
        assert "_comma_" not in text
        assert item.context and item.candidate
    ep = items["epitome:97keuy"]
    assert ep.candidate == "So sorry for your loss"
    assert ep.metadata["rp_id"] == "e48xfwa"
    # lend an ear: conversation ends with the (simulated) seeker; it is kept, not dropped
    lae = items["lend_an_ear:20241031124050492385"]
    assert lae.metadata["after_candidate"][0]["role"] == "user"


def test_missing_folder_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="annotations"):
        convert_empathic_communication(tmp_path)


def _lend_an_ear_with(tmp_path: Path, transcript: str) -> tuple[Path, str]:
    """A copy of the dataset whose first Lend an Ear conversation is ``transcript``."""
    src = tmp_path / "ec"
    shutil.copytree(SRC, src)
    path = src / "original_data" / "sample_lend_an_ear_conversations.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    rows[1][rows[0].index("full_conversation")] = transcript
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return src, rows[1][rows[0].index("conversation_id")]


def test_transcript_rules(tmp_path: Path) -> None:
    text = "Seeker: a \n Seeker: b \n Supporter: c\n\nmore c\nSeeker: d"
    src, conv = _lend_an_ear_with(tmp_path, text)
    item = next(
        i for i in convert_empathic_communication(src).items if i.item_id == f"lend_an_ear:{conv}"
    )
    # consecutive seeker lines merge; a line without a prefix continues the previous message;
    # the seeker's closing line is kept after the candidate
    assert [(m.role, m.content) for m in item.context] == [("user", "a\nb")]
    assert item.candidate == "c\nmore c"
    assert item.metadata["after_candidate"] == [{"role": "user", "content": "d"}]


def test_text_before_the_first_speaker_is_a_user_error(tmp_path: Path) -> None:
    src, conv = _lend_an_ear_with(tmp_path, "hello\nSeeker: a")
    with pytest.raises(UserError) as err:
        convert_empathic_communication(src)
    message = str(err.value)
    assert "sample_lend_an_ear_conversations.csv" in message and conv in message
    assert "full_conversation" in message and "before the first speaker" in message
