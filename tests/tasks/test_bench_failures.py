"""Failures are records: counted by status, never scored as zero, not re-run on resume."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from attune_judge.data import read_jsonl
from attune_judge.data.instrument import PANAS_ITEMS
from attune_judge.runs import summary_json
from attune_judge.tasks import BenchConfig, run_bench
from attune_judge.tasks._emotion import EmotionTag, score_emotion, set_prf
from attune_judge.tasks._records import TaskRecord
from attune_judge.testing import ScriptedEngine
from tests.tasks._fixtures import model_engine, write_data


def test_unparseable_answers_are_parse_errors_and_resume_skips_them(tmp_path):
    data = write_data(tmp_path / "data")
    garbage = ScriptedEngine(lambda messages: "I feel that they feel sad, probably.")
    good = model_engine(True)
    lms = {"garbage": garbage.lm(), "alpha": good.lm()}
    config = BenchConfig(
        data=data,
        models=["alpha", "garbage"],
        out=tmp_path / "run",
        tasks=["emotion"],
        B=200,
        max_failure_rate=1.0,
    )
    result = run_bench(config, lms=lms)
    block = summary_json(result.summary)["bench"]["tasks"]["emotion"]
    assert block["units_by_status"] == {"alpha": {"ok": 2}, "garbage": {"parse_error": 2}}
    # no scored unit -> undefined, not 0
    assert block["metrics"]["f1"]["models"]["garbage"]["estimate"] is None
    assert [r["model"] for r in block["leaderboard"]["rows"]] == ["alpha"]
    records = read_jsonl(config.out / "records.jsonl", TaskRecord)
    bad = [r for r in records if r.model == "garbage"]
    assert all(r.status == "parse_error" and r.metrics == {} for r in bad)
    calls = garbage.calls
    again = run_bench(config, lms=lms)
    assert again.n_run == 0 and garbage.calls == calls


def test_a_changed_model_list_is_refused_not_mixed(tmp_path):
    from attune_judge.errors import UserError

    data = write_data(tmp_path / "data")
    lms = {"alpha": model_engine(True).lm(), "beta": model_engine(False).lm()}
    base = {"data": data, "out": tmp_path / "run", "tasks": ["emotion"]}
    run_bench(BenchConfig(models=["alpha"], B=200, **base), lms=lms)
    with pytest.raises(UserError, match="different run"):
        run_bench(BenchConfig(models=["alpha", "beta"], B=200, **base), lms=lms)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["models"] == ["alpha"]


_tags = st.lists(
    st.builds(
        EmotionTag,
        st.sampled_from([*PANAS_ITEMS, "sad", "calm"]),
        st.one_of(st.none(), st.integers(1, 7)),
    ),
    max_size=5,
)
_true_tags = st.lists(
    st.builds(EmotionTag, st.sampled_from(PANAS_ITEMS), st.integers(1, 7)), max_size=4
)


@settings(deadline=None)  # the first call imports scipy.optimize lazily (~0.7 s)
@given(_tags, _true_tags)
# random draws rarely give equal non-empty sets: pin the "same" branch (case and intensity
# differ; duplicates collapse) and a near miss (one extra predicted emotion)
@example([EmotionTag("upset", None), EmotionTag("Upset", 2)], [EmotionTag("Upset", 6)])
@example([EmotionTag("Upset", 6), EmotionTag("Afraid", 1)], [EmotionTag("Upset", 6)])
def test_emotion_metrics_are_bounded_and_perfect_only_for_equal_sets(pred, true):
    m = score_emotion(pred, true)
    for key in ("precision", "recall", "f1", "va_similarity"):
        assert 0.0 <= m[key] <= 1.0 + 1e-12
    names = {t.emotion.lower() for t in pred}
    same = names == {t.emotion.lower() for t in true}
    assert (m["f1"] == 1.0) == same
    if same:
        assert m["va_similarity"] == 1.0


@given(st.sets(st.sampled_from("abcdef")), st.sets(st.sampled_from("abcdef")))
def test_set_f1_is_symmetric_and_precision_recall_swap(p, t):
    p1, r1, f1 = set_prf(p, t)
    p2, r2, f2 = set_prf(t, p)
    assert (p1, r1) == (r2, p2)
    assert f1 == f2


def test_one_model_gets_scores_without_rankings_to_compare(tmp_path):
    data = write_data(tmp_path / "data")
    config = BenchConfig(
        data=data,
        models=["alpha"],
        out=tmp_path / "run",
        tasks=["emotion", "preference"],
        B=200,
    )
    result = run_bench(config, lms={"alpha": model_engine(True).lm()})
    b = summary_json(result.summary)["bench"]
    # alpha's preference accuracy 2/3 (see _fixtures.py); one model: τ undefined, no W
    assert b["tasks"]["preference"]["metrics"]["accuracy"]["models"]["alpha"]["estimate"] == (2 / 3)
    assert b["tau_intervals"]["emotion"]["preference"]["estimate"] is None
    assert "kendall_w" not in b
    assert b["tasks"]["emotion"]["discriminability"]["n_model_pairs"] == 0
