"""``annotate sample``: inclusion probabilities that match how often items are drawn, and the
pilot's sample-size answer."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from attune_judge.annotate import conversations_needed, load_items, sample_items
from attune_judge.data import Rating
from attune_judge.errors import UserError
from tests.annotate._fixtures import make_items, make_judgments, make_rubric


def _items(tmp_path: Path, n_conv: int = 10, models: tuple[str, ...] = ("m1", "m2", "m3")):
    found, _ = load_items(make_items(tmp_path, n_conv, models), str(make_rubric(tmp_path)))
    return found


def test_uniform_over_conversations_keeps_whole_conversations(tmp_path: Path) -> None:
    items = _items(tmp_path)
    drawn = sample_items(items, 4, seed=3)
    convs = {i.conversation_id for i in drawn}
    assert len(convs) == 4 and len(drawn) == 12  # every item of the 4 drawn conversations
    assert {i.metadata["inclusion_probability"] for i in drawn} == {0.4}
    assert sample_items(items, 4, seed=3) == drawn  # the seed fixes the draw


def test_stratified_probabilities_match_the_draw_frequencies(tmp_path: Path) -> None:
    # unequal strata: 10 items of m1, 4 of m2 (items of m2 only in c0..c3)
    items = [
        i
        for i in _items(tmp_path, 10, ("m1", "m2"))
        if i.candidate_model == "m1" or int(i.conversation_id[1:]) < 4
    ]
    drawn = sample_items(items, 6, by="model", seed=0)
    probs = {i.candidate_model: i.metadata["inclusion_probability"] for i in drawn}
    assert probs == {"m1": pytest.approx(3 / 10), "m2": pytest.approx(3 / 4)}  # equal allocation
    prop = sample_items(items, 7, by="model", allocation="proportional", seed=0)
    assert Counter(i.candidate_model for i in prop) == {"m1": 5, "m2": 2}
    # Monte Carlo: each item's draw frequency approaches its recorded probability
    runs = 2000
    hits: Counter[str] = Counter()
    for seed in range(runs):
        hits.update(i.item_id for i in sample_items(items, 6, by="model", seed=seed))
    for item in items:
        want = 0.3 if item.candidate_model == "m1" else 0.75
        assert hits[item.item_id] / runs == pytest.approx(want, abs=0.04), item.item_id


def test_score_strata_need_a_judge_and_bin_by_score(tmp_path: Path) -> None:
    items = _items(tmp_path, 8, ("m1",))
    with pytest.raises(UserError, match="--by score needs --judge"):
        sample_items(items, 4, by="score")
    judge = make_judgments(
        tmp_path, {i.item_id: (n % 5 + 1, n % 5 + 1) for n, i in enumerate(items)}
    )
    drawn = sample_items(items, 4, by="score", judge=judge, strata=2)
    assert Counter(i.metadata["stratum"] for i in drawn) == {
        "score bin 1 of 2": 2,
        "score bin 2 of 2": 2,
    }


def test_pilot_scales_the_interval_width_by_the_square_root_rule(tmp_path: Path) -> None:
    pilot = []
    for c in range(12):
        for item in range(2):
            base = (c * 2 + item) % 5 + 1
            for rater, shift in (("a", 0), ("b", (c + item) % 2)):
                pilot.append(
                    Rating(
                        item_id=f"c{c}:{item}",
                        rater=rater,
                        dimension="warmth",
                        value=min(5, base + shift),
                        cluster=f"c{c}",
                    )
                )
    (row,) = conversations_needed(pilot, 0.1, B=300)
    assert row["clusters"] == 12 and row["width"] > 0
    assert row["conversations_needed"] == pytest.approx(12 * (row["width"] / 0.1) ** 2, abs=1)
    (half,) = conversations_needed(pilot, row["width"], B=300)
    assert half["conversations_needed"] == 12  # the pilot's own width needs the pilot's size


def test_probabilities_reach_the_export_and_weight_the_estimates(tmp_path: Path) -> None:
    from attune_judge.annotate import export_labels, prepare
    from attune_judge.data import read_jsonl, write_jsonl
    from attune_judge.validate import calibrate_files, ppi_rank

    items = [
        i
        for i in _items(tmp_path, 6, ("m1", "m2"))
        if i.candidate_model == "m1" or int(i.conversation_id[1:]) < 3
    ]
    judge = make_judgments(
        tmp_path, {i.item_id: (2 + n % 3, 1 + n % 4) for n, i in enumerate(items)}
    )
    for by, n, warned in (("model", 6, True), ("conversation", 4, False)):
        drawn = sample_items(items, n, by=by, seed=1)
        write_jsonl(tmp_path / f"{by}.jsonl", drawn)
        store, _ = prepare(
            tmp_path / f"{by}.sqlite",
            tmp_path / f"{by}.jsonl",
            task="ratings",
            rubric=str(tmp_path / "rubric.yaml"),
            k=2,
            annotators=["a", "b"],
        )
        for m, item in enumerate(store.items()):
            store.record("a", item.item_id, "label", {"warmth": 1 + m % 5, "fit": 2})
            store.record("b", item.item_id, "label", {"warmth": 1 + (m + m % 2) % 5, "fit": 3})
        store.close()
        out = tmp_path / f"{by}-labels.jsonl"
        export_labels(tmp_path / f"{by}.sqlite", out)
        probs = {i.item_id: i.metadata["inclusion_probability"] for i in drawn}
        assert all(
            r.metadata["inclusion_probability"] == probs[r.item_id] for r in read_jsonl(out, Rating)
        )
        text = calibrate_files(out, judge, B=100).markdown
        ranked = ppi_rank(judge, out, human_scale=(1.0, 5.0)).markdown
        said = "weighted by 1/inclusion probability"
        assert (said in text) is warned, by
        assert (said in ranked) is warned, by
