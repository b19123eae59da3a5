"""Converters from Judgment records."""

from __future__ import annotations

from attune_judge.calibration import judgments_to_ratings, judgments_to_scores
from attune_judge.data import Judgment


def _j(item: str, **kw: object) -> Judgment:
    return Judgment(item_id=item, judge_id="J1", conversation_id="c1", **kw)  # type: ignore[arg-type]


def test_judgments_to_ratings_one_rating_per_criterion_and_overall() -> None:
    js = [
        _j("i1", scores={"empathy": 4.0, "clarity": 3.0}, overall=3.5, candidate_model="m"),
        _j("i2", status="parse_error", scores={"empathy": 1.0}),
        _j("i3", scores={"overall": 2.0}, overall=2.0),
    ]
    rs = judgments_to_ratings(js)
    got = sorted((r.item_id, r.dimension, r.value) for r in rs)
    assert got == [
        ("i1", "clarity", 3.0),
        ("i1", "empathy", 4.0),
        ("i1", "overall", 3.5),
        ("i3", "overall", 2.0),
    ]
    assert {r.rater for r in rs} == {"J1"} and {r.cluster for r in rs} == {"c1"}
    assert {r.rater_group for r in rs} == {"judge"}


def test_judgments_to_scores_keeps_ok_scored_rows() -> None:
    js = [
        _j("i1", candidate_model="m1", normalized=0.75, overall=4.0),
        _j("i2", candidate_model="m2", normalized=None, overall=2.0),
        _j("i3", candidate_model="m2", normalized=0.25, status="lm_error"),
        _j("i4", candidate_model=None, normalized=0.5),
    ]
    assert judgments_to_scores(js) == (["m1"], ["c1"], [0.75])
    assert judgments_to_scores(js, field="overall") == (["m1", "m2"], ["c1", "c1"], [4.0, 2.0])
