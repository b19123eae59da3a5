"""The pieces of ``align``: the cluster split, the score map, the metric, the human ceiling."""

from __future__ import annotations

import numpy as np
import pytest

from attune_judge.align import cluster_split

# private unit: the isotonic score map, item agreement and human-ceiling kernels
from attune_judge.align._data import LabelledItem
from attune_judge.align._isotonic import crossfit_score_map, fit_score_map
from attune_judge.align._metric import item_agreement
from attune_judge.align._proof import human_ceiling_values
from attune_judge.data import ChatMessage, JudgeItem
from attune_judge.errors import UserError
from attune_judge.rubrics import load_rubric

RUBRIC = load_rubric("empathic-communication-epitome")
C0 = "level_emotional_reactions"


def test_split_keeps_conversations_whole_and_is_seeded() -> None:
    ids = [f"c{c}:{t}" for c in range(20) for t in range(3)]
    clusters = [i.split(":")[0] for i in ids]
    a = cluster_split(ids, clusters, seed=1)
    assert a == cluster_split(ids, clusters, seed=1)
    assert a != cluster_split(ids, clusters, seed=2)
    parts = [set(a.train), set(a.dev), set(a.test)]
    assert sum(map(len, parts)) == 20 and not (parts[0] & parts[2]) and not (parts[1] & parts[2])
    assert (len(a.train), len(a.dev), len(a.test)) == (8, 4, 8)
    for name in ("train", "dev", "test"):
        assert all(i.split(":")[0] in getattr(a, name) for i in a.items[name])
    with pytest.raises(UserError, match="at least 3 conversations"):
        cluster_split(["a", "b"], ["x", "y"])


def test_score_map_is_monotone_and_pools_violators() -> None:
    judge = [{C0: x} for x in (0, 0, 1, 1, 2, 2)]
    human = [{C0: y} for y in (0.5, 0.5, 0.2, 0.4, 1.8, 2.0)]
    smap = fit_score_map(judge, human, [C0])
    x, y = smap.points[C0]
    # means 0.5, 0.3 violate the order: pooled to 0.4 (pool-adjacent-violators), then 1.9
    assert x == [0.0, 1.0, 2.0]
    assert y == pytest.approx([0.4, 0.4, 1.9])
    assert smap.apply(C0, 1.5) == pytest.approx(1.15)
    assert smap.apply("other", 7.0) == 7.0


def test_crossfit_never_maps_a_conversation_with_its_own_labels() -> None:
    rng = np.random.default_rng(0)
    clusters = [f"c{k}" for k in range(10) for _ in range(2)]
    judge = [{C0: float(rng.integers(0, 3))} for _ in clusters]
    human = [{C0: float(rng.uniform(0, 2))} for _ in clusters]
    # a conversation whose labels are extreme: if its own labels were used it would be pulled
    human[0] = human[1] = {C0: 100.0}
    judge[0] = judge[1] = {C0: 2.0}
    out = crossfit_score_map(judge, human, clusters, [C0], folds=10)
    assert out[0][C0] < 50 and out[1][C0] < 50


def test_metric_and_human_ceiling_by_hand() -> None:
    assert item_agreement({C0: 2}, {C0: 1.0}, RUBRIC) == pytest.approx(0.5)
    assert item_agreement({C0: 2}, {C0: 1.0}, RUBRIC, "quadratic") == pytest.approx(0.75)
    assert item_agreement({C0: 1}, {C0: 1.4}, RUBRIC, "exact") == 1.0
    item = JudgeItem(
        item_id="i",
        conversation_id="c",
        context=[ChatMessage(role="user", content="x")],
        candidate="y",
        candidate_model="m",
    )
    li = LabelledItem(
        item=item,
        human={C0: 1.0},
        raters={"a": {C0: 0.0}, "b": {C0: 1.0}, "c": {C0: 2.0}},
    )
    # a vs mean(b, c) = 1.5 → 1 − 1.5/2 = 0.25; b vs 1.0 → 1; c vs 0.5 → 0.25
    [(cluster, value)] = human_ceiling_values([li], RUBRIC, "ordinal")
    assert cluster == "c" and value == pytest.approx((0.25 + 1.0 + 0.25) / 3)
