"""Converters from Judgment records."""

from __future__ import annotations

import pytest

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


def test_calibrate_reads_a_run_log_by_the_last_judgment_rule(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A re-run appends a new judgment of an item; ``calibrate --judge RUN`` must count the
    last one only, exactly as if the log held just the final judgments."""
    import json

    from attune_judge.cli import main
    from attune_judge.data import Rating, write_jsonl

    final = [
        Judgment(item_id=f"i{k}", judge_id="J1", conversation_id=f"c{k % 4}", scores={"e": s})
        for k, s in enumerate([1, 2, 3, 4, 5, 2, 3, 4])
    ]
    stale = [  # first attempts: a failure and a different, superseded score
        Judgment(item_id="i0", judge_id="J1", conversation_id="c0", status="parse_error"),
        Judgment(item_id="i3", judge_id="J1", conversation_id="c3", scores={"e": 1.0}),
    ]
    people = [
        Rating(item_id=f"i{k}", rater=r, dimension="e", value=v, cluster=f"c{k % 4}")
        for k, base in enumerate([1, 2, 3, 4, 5, 2, 3, 4])
        for r, v in (("p1", base), ("p2", min(5, base + k % 2)))
    ]
    human = tmp_path / "human.jsonl"
    write_jsonl(human, people)
    results = []
    for name, log in (("rerun", stale + final), ("clean", final)):
        run = tmp_path / name
        run.mkdir()
        write_jsonl(run / "judgments.jsonl", log)
        with pytest.raises(SystemExit) as stop:
            main(["calibrate", "--human", str(human), "--judge", str(run), "--json", "-B", "200"])
        assert stop.value.code == 0
        results.append(json.loads(capsys.readouterr().out))
    assert results[0] == results[1]
    assert len(results[0]["dimensions"][0]["judges"]) == 1
