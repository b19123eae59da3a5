"""ESConv adapter on real files (a sample of the FADO reformat + original FailedESConv.json
in tests/fixtures)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from attune_judge.data.adapters import AdapterResult, convert_esconv
from attune_judge.errors import UserError
from tests.conftest import DATASETS

SRC = DATASETS / "esconv"


@pytest.fixture(scope="module")
def result() -> AdapterResult:
    return convert_esconv(SRC, item_level="conversation")


@pytest.fixture(scope="module")
def raw() -> tuple[list[dict], list[dict]]:
    fado = [
        json.loads(line)
        for split in ("train", "valid", "test")
        for line in (SRC / "fado-reformat" / f"{split}_rl.jsonl").read_text("utf-8").splitlines()
    ]
    failed = json.loads((SRC / "original-thu-coai" / "FailedESConv.json").read_text("utf-8"))
    return fado, failed


def test_counts(result: AdapterResult, raw: tuple[list[dict], list[dict]]) -> None:
    fado, failed = raw
    # the fixture: 10 FADO + 11 FailedESConv conversations (full data: 1,300 and 196)
    assert (len(fado), len(failed)) == (10, 11)
    sys_msgs = sum(m["speaker"] == "sys" for d in fado for m in d["dialog"]) + sum(
        m["speaker"] == "listener" for d in failed for m in d["dialog"]
    )
    feedback = sum(m.get("rating") is not None for d in fado for m in d["dialog"]) + sum(
        "feedback" in m["annotation"] for d in failed for m in d["dialog"]
    )
    survey = 4 * len(fado) + sum(
        len(d["survey_score"].get(k, {})) for d in failed for k in ("seeker", "supporter")
    )
    dims = Counter(r.dimension for r in result.ratings)
    assert dims["strategy"] == sys_msgs
    assert dims["feedback"] == feedback
    assert len(result.ratings) == sys_msgs + feedback + survey
    assert len(result.items) == len(fado) + len(failed)  # conversation level only here


def test_strategy_labels(result: AdapterResult, raw: tuple[list[dict], list[dict]]) -> None:
    _, failed = raw
    raw_failed = Counter(
        m["annotation"].get("strategy") for d in failed for m in d["dialog"] if m["annotation"]
    )
    assert raw_failed["Questions"] > 0 and raw_failed["Other"] > 0
    labels = Counter(r.value for r in result.ratings if r.dimension == "strategy")
    # FailedESConv spells "Questions"/"Other"; normalised to strategy.json's names
    assert "Questions" not in labels and "Other" not in labels
    # the dataset's own list of strategies (strategy.json spells them "[Question]", ...)
    strategies = [
        s.strip("[]") for s in json.loads((SRC / "original-thu-coai" / "strategy.json").read_text())
    ]
    assert len(strategies) == 8  # ESConv's eight support strategies (Liu et al., 2021)
    assert set(strategies) <= set(labels)
    extra = set(labels) - set(strategies)
    assert extra == {"Direct Guidance", "Approval and Reassurance"}
    assert result.report is not None
    outside = raw_failed["Direct Guidance"] + raw_failed["Approval and Reassurance"]
    assert outside > 0  # full data: 11 + 7
    assert len(result.report.unmatched["strategy labels outside strategy.json"]) == outside


def test_feedback_attached_to_preceding_supporter_message(result: AdapterResult) -> None:
    # fado test_rl.jsonl line 1: sys "Hello...", usr (no rating), sys "Okay. I am very sorry"
    # (strategy Question), usr rating "4" -> feedback 4 on supporter message 2 of that dialog
    fb = [
        r for r in result.ratings if r.dimension == "feedback" and r.cluster == "esconv:test:0000"
    ]
    assert fb[0].item_id == "esconv:test:0000:2" and fb[0].value == 4.0
    assert fb[0].metadata["covers_items"] == ["esconv:test:0000:1", "esconv:test:0000:2"]
    assert all(r.rater == "seeker" and r.rater_group == "participant" for r in fb)


def test_missing_survey_values_kept_as_none(
    result: AdapterResult, raw: tuple[list[dict], list[dict]]
) -> None:
    assert result.report is not None
    # some fado conversations have empathy == relevance == "-1" (not answered; 150 in the
    # full data)
    fado, _ = raw
    unanswered = sum(str(d["empathy"]) == "-1" for d in fado)
    assert unanswered == sum(str(d["relevance"]) == "-1" for d in fado) > 0
    assert result.report.value_ranges["empathy"]["missing"] == unanswered
    assert result.report.value_ranges["relevance"]["missing"] == unanswered
    for dim, rng in result.report.value_ranges.items():
        assert 1.0 <= rng["min"] <= rng["max"] <= 5.0, dim


def test_message_items(tmp_path: Path) -> None:
    # message-level items on the small FailedESConv file only
    (tmp_path / "original-thu-coai").mkdir()
    failed = SRC / "original-thu-coai" / "FailedESConv.json"
    (tmp_path / "original-thu-coai" / "FailedESConv.json").write_bytes(failed.read_bytes())
    res = convert_esconv(tmp_path, item_level="message")
    data = json.loads(failed.read_text("utf-8"))
    listeners = sum(m["speaker"] == "listener" for d in data for m in d["dialog"])
    assert res.report is not None
    skipped = res.report.unmatched["supporter messages before any seeker message (no item)"]
    assert len(res.items) + len(skipped) == listeners
    item = next(i for i in res.items if i.item_id == "esconv:failed:0000:3")
    # FailedESConv[0]: speaker "Hey there", "How are you?", listener "hi", "I AM FINE, AND YOU",
    # speaker (feedback 4) "I am depressed...", listener "Please, how can I help? ..."
    assert item.candidate == "Please, how can I help? I am with you"
    assert [m.role for m in item.context] == ["user", "assistant", "user"]
    assert item.context[0].content == "Hey there\nHow are you?"
    assert item.metadata["strategy"] == "Others"


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no ESConv files"):
        convert_esconv(tmp_path)
