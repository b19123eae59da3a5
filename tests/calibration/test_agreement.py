"""Agreement metrics against independent implementations and hand computations."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from attune_judge.calibration import (
    RatingTable,
    aggregate_raters,
    alpha_with_judge,
    alternative_annotator_test,
    fdr_adjust,
    group_agreement,
    human_ceiling,
    interval_endpoints,
    krippendorff_alpha,
    pair_agreement,
    pairwise_matrix,
)

# private unit: the mid-rank and contingency-table kernels under the agreement statistics
from attune_judge.calibration.agreement._pairwise import _midranks, _table_stats
from attune_judge.calibration.agreement._reliability import coincidence_data
from attune_judge.errors import UserError


def _likert(n: int, seed: int, noise: float = 0.8) -> tuple[list[float], list[float], list[int]]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    x = np.clip(np.round(3 + truth + rng.normal(scale=noise, size=n)), 1, 5)
    y = np.clip(np.round(3 + truth + rng.normal(scale=noise, size=n)), 1, 5)
    return x.tolist(), y.tolist(), (np.arange(n) // 4).tolist()


def test_pair_metrics_match_scipy_and_hand_formulas() -> None:
    x, y, cl = _likert(120, seed=0)
    res = pair_agreement(x, y, cl, B=300).metrics
    xa, ya = np.array(x), np.array(y)
    assert res["spearman"].estimate == pytest.approx(stats.spearmanr(x, y).statistic)
    assert res["kendall_tau_b"].estimate == pytest.approx(stats.kendalltau(x, y).statistic)
    assert res["pearson"].estimate == pytest.approx(stats.pearsonr(x, y).statistic)
    assert res["mae"].estimate == pytest.approx(np.mean(np.abs(xa - ya)))
    assert res["raw_agreement"].estimate == pytest.approx(np.mean(xa == ya))
    for m in res.values():
        assert m.lower is not None and m.upper is not None and m.estimate is not None
        assert m.lower <= m.estimate <= m.upper
        assert m.n_clusters == 30


def test_continuous_values_use_row_weights_and_a_loop_for_kendall() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=100)
    y = x + rng.normal(size=100)
    cl = np.arange(100) // 5
    res = pair_agreement(x.tolist(), y.tolist(), cl.tolist(), B=200).metrics
    assert res["spearman"].estimate == pytest.approx(stats.spearmanr(x, y).statistic)
    assert res["kendall_tau_b"].estimate == pytest.approx(stats.kendalltau(x, y).statistic)
    assert res["kendall_tau_b"].engine == "loop"
    assert res["cohen_kappa"].estimate is None
    assert "categories" in (res["cohen_kappa"].undefined_reason or "")
    assert pair_agreement(
        x.tolist(),
        (x + 0.05).tolist(),
        cl.tolist(),
        tolerance=0.1,
        metrics=["raw_agreement"],
        B=50,
    ).metrics["raw_agreement"].estimate == pytest.approx(1.0)


def test_weighted_tables_equal_duplicated_data() -> None:
    # a bootstrap replicate with weights w must equal the statistic on the data where each
    # cluster is repeated w_c times (checked against SciPy on the expanded data)
    x, y, cl = _likert(40, seed=2)
    cats = sorted(set(x) | set(y))
    K = len(cats)
    w = np.random.default_rng(0).multinomial(10, np.full(10, 0.1)).astype(float)
    idx = [i for i in range(40) for _ in range(int(w[cl[i]]))]
    xe, ye = np.array(x)[idx], np.array(y)[idx]
    T = np.zeros((K, K))
    for i in range(40):
        T[cats.index(x[i]), cats.index(y[i])] += w[cl[i]]
    val = np.asarray(cats)
    pos = np.arange(K, dtype=float)
    got = {
        n: _table_stats(T[None], pos, val, n, 0.0)[0]
        for n in ("spearman", "kendall_tau_b", "pearson", "mae")
    }
    assert got["spearman"] == pytest.approx(stats.spearmanr(xe, ye).statistic)
    assert got["kendall_tau_b"] == pytest.approx(stats.kendalltau(xe, ye).statistic)
    assert got["pearson"] == pytest.approx(stats.pearsonr(xe, ye).statistic)
    assert got["mae"] == pytest.approx(np.mean(np.abs(xe - ye)))
    v = np.array([3.0, 1.0, 3.0, 2.0])
    wr = np.array([[2.0, 1.0, 0.0, 1.0]])
    # expanded sample 3, 3, 1, 2 → mid-ranks 3.5, 3.5, 1, 2 (the zero-weight row gets 3.5 too)
    assert _midranks(v, wr)[0].tolist() == [3.5, 1.0, 3.5, 2.0]


def test_weighted_alpha_equals_package_on_duplicated_units() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(1, 5, size=(12, 3)).astype(float)
    data[rng.random((12, 3)) < 0.2] = np.nan
    items = [f"i{k:02d}" for k in range(12)]
    clusters = [f"c{k // 3}" for k in range(12)]
    table = RatingTable(
        items,
        ["a", "b", "c"],
        [[None if np.isnan(v) else float(v) for v in row] for row in data],
        clusters,
    )
    w = np.array([2.0, 0.0, 1.0, 1.0])
    keep = [k for k in range(12) for _ in range(int(w[k // 3]))]
    for level in ("nominal", "ordinal", "interval", "ratio"):
        cd = coincidence_data(table, level)  # type: ignore[arg-type]
        expected = krippendorff.alpha(
            reliability_data=data[keep].T,
            level_of_measurement=level,
            value_domain=[1.0, 2.0, 3.0, 4.0],
        )
        assert cd.alpha(w[None])[0] == pytest.approx(expected)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=4, max_size=25).filter(lambda v: len(set(v)) > 1),
    st.integers(2, 4),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
)
def test_alpha_is_one_for_identical_coders(values: list[int], n_coders: int, level: str) -> None:
    items = [f"i{k}" for k in range(len(values))]
    table = RatingTable(
        items, [f"r{j}" for j in range(n_coders)], [[float(v)] * n_coders for v in values], items
    )
    res = krippendorff_alpha(table, level, B=100)  # type: ignore[arg-type]
    assert res.estimate == pytest.approx(1.0)
    if res.n_undefined_replicates > 0.10 * res.B:
        # resamples without variation leave α undefined; too many of them: no interval
        assert res.lower is None and res.upper is None
        assert "no interval" in (res.note or "")
    else:
        assert res.lower == pytest.approx(1.0) and res.upper == pytest.approx(1.0)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(0, 5)), min_size=8, max_size=30
    ),
    st.randoms(use_true_random=False),
)
def test_pair_agreement_is_row_order_free(rows: list[tuple[int, int, int]], rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(rows)
    rnd.shuffle(shuffled)

    def run(r: list[tuple[int, int, int]]) -> dict:
        return pair_agreement(
            [float(a) for a, _, _ in r], [float(b) for _, b, _ in r], [c for _, _, c in r], B=100
        ).model_dump()

    assert run(rows) == run(shuffled)


def _panel(n_items: int, humans: int, judge_noise: float, seed: int) -> RatingTable:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n_items)
    raters = [f"h{j}" for j in range(humans)] + ["judge"]
    noise = [0.7] * humans + [judge_noise]
    values = [
        [float(np.clip(np.round(3 + truth[i] + rng.normal(scale=s)), 1, 5)) for s in noise]
        for i in range(n_items)
    ]
    items = [f"i{i:03d}" for i in range(n_items)]
    return RatingTable(items, raters, values, [f"c{i // 3}" for i in range(n_items)])


def test_aggregates_by_hand() -> None:
    t = RatingTable(
        ["a", "b", "c"],
        ["x", "y", "z"],
        [[1.0, 2.0, 2.0], [1.0, 3.0, None], [4.0, 1.0, 2.0]],
        ["a", "b", "c"],
    )
    assert aggregate_raters(t, ["x", "y", "z"], "mean") == [
        pytest.approx(5 / 3),
        2.0,
        pytest.approx(7 / 3),
    ]
    assert aggregate_raters(t, ["x", "y", "z"], "median") == [2.0, 2.0, 2.0]
    # item b: 1 vs 3 tied, median 2 is equally close → the lower; item c: all tied, median 2
    assert aggregate_raters(t, ["x", "y", "z"], "majority") == [2.0, 1.0, 2.0]


def test_pairwise_matrix_and_group_agreement() -> None:
    t = _panel(60, 3, 0.7, seed=4)
    pm = pairwise_matrix(t, "spearman", B=100)
    assert len(pm.pairs) == 6
    assert pm.estimate[0][1] == pm.estimate[1][0]
    assert pm.estimate[0][1] == pytest.approx(
        stats.spearmanr(t.column("h0"), t.column("h1")).statistic
    )
    g = group_agreement(t, ["h0", "h1"], ["h2", "judge"], how="mean", metrics=["pearson"], B=100)
    a = np.mean([t.column("h0"), t.column("h1")], axis=0)
    b = np.mean([t.column("h2"), t.column("judge")], axis=0)
    assert g.metrics["pearson"].estimate == pytest.approx(stats.pearsonr(a, b).statistic)


def test_human_ceiling_is_leave_one_out() -> None:
    t = _panel(60, 3, 0.7, seed=5)
    hc = human_ceiling(t, ["h0", "h1", "h2"], "judge", metric="pearson", how="mean", B=100)
    rest = np.mean([t.column("h1"), t.column("h2")], axis=0)
    assert hc.rows[0].human_vs_rest.estimate == pytest.approx(
        stats.pearsonr(t.column("h0"), rest).statistic
    )
    assert hc.rows[0].judge_vs_rest is not None
    assert hc.rows[0].judge_vs_rest.estimate == pytest.approx(
        stats.pearsonr(t.column("judge"), rest).statistic
    )
    assert hc.mean_human is not None and hc.mean_judge is not None


def test_alpha_with_a_copy_of_a_human_as_judge_goes_up() -> None:
    t = _panel(60, 3, 0.7, seed=6)
    values = [[*row[:3], row[0]] for row in t.values]  # judge = exact copy of h0
    t2 = RatingTable(t.items, t.raters, values, t.clusters)
    res = alpha_with_judge(t2, ["h0", "h1", "h2"], "judge", "interval", B=200)
    assert res.with_judge.estimate is not None and res.humans_only.estimate is not None
    assert res.difference.estimate == pytest.approx(
        res.with_judge.estimate - res.humans_only.estimate
    )
    assert res.with_judge.estimate > res.humans_only.estimate


def test_fdr_adjust_by_hand() -> None:
    # BH: p = (0.01, 0.04, 0.03), m = 3 → sorted 0.01·3/1, 0.03·3/2, 0.04·3/3 = 0.03, 0.045, 0.04
    # monotone from the top: 0.03, 0.04, 0.04 → back in input order 0.03, 0.04, 0.04
    assert fdr_adjust([0.01, 0.04, 0.03], "bh") == pytest.approx([0.03, 0.04, 0.04])
    # BY multiplies by 1 + 1/2 + 1/3 = 11/6
    assert fdr_adjust([0.01, 0.04, 0.03], "by") == pytest.approx(
        [0.03 * 11 / 6, 0.04 * 11 / 6, 0.04 * 11 / 6]
    )


def test_alt_test_by_hand_on_categories() -> None:
    # three humans agree on every item; the judge agrees with them on every item → for each
    # left-out human S_f = S_h = 1, W^f = W^h = 1, d = 0 < ε: the judge wins against everyone
    items = [f"i{k}" for k in range(40)]
    vals = [["x" if k % 2 else "y"] * 4 for k in range(40)]
    t = RatingTable(items, ["h0", "h1", "h2", "judge"], vals, items)  # type: ignore[arg-type]
    res = alternative_annotator_test(t, ["h0", "h1", "h2"], "judge", epsilon=0.1)
    assert res.alignment == "accuracy"
    assert res.winning_rate == 1.0 and res.passed
    assert all(h.rho_judge == 1.0 and h.rho_human == 1.0 for h in res.humans)
    # a judge that is always wrong: W^f = 0, W^h = 1 → d = 1 > ε everywhere: it never wins
    bad = RatingTable(items, t.raters, [[*row[:3], "z"] for row in vals], items)  # type: ignore[arg-type]
    res2 = alternative_annotator_test(bad, ["h0", "h1", "h2"], "judge", epsilon=0.1)
    assert res2.winning_rate == 0.0 and not res2.passed


def test_alt_test_numeric_uses_rmse_and_a_t_test() -> None:
    t = _panel(90, 3, 0.3, seed=7)  # judge closer to the truth than any human
    res = alternative_annotator_test(t, ["h0", "h1", "h2"], "judge", epsilon=0.2)
    assert res.alignment == "neg_rmse"
    assert len(res.humans) == 3
    assert res.passed
    worse = alternative_annotator_test(
        _panel(90, 3, 3.0, seed=7), ["h0", "h1", "h2"], "judge", epsilon=0.0
    )
    assert not worse.passed


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.integers(0, 9)),
        min_size=6,
        max_size=40,
    ).filter(lambda r: len({c for *_, c in r}) >= 3)
)
def test_every_agreement_interval_contains_its_estimate(
    rows: list[tuple[int, int, int, int]],
) -> None:
    x = [float(a) for a, _, _, _ in rows]
    y = [float(b) for _, b, _, _ in rows]
    cl = [c for *_, c in rows]
    metrics = list(pair_agreement(x, y, cl, B=200).metrics.values())
    items = [f"i{k}" for k in range(len(rows))]
    table = RatingTable(
        items,
        ["a", "b", "c"],
        [[float(a), float(b), float(c)] for a, b, c, _ in rows],
        [str(c) for c in cl],
    )
    metrics += [krippendorff_alpha(table, lv, B=200) for lv in ("nominal", "interval")]  # type: ignore[arg-type]
    for m in metrics:
        if m.estimate is None:
            assert m.undefined_reason
            continue
        if m.n_undefined_replicates > 0.10 * m.B:  # too many undefined draws: withheld
            assert m.lower is None and m.upper is None and "no interval" in (m.note or "")
            continue
        if m.lower is None:  # replicates (almost) all on one side: withheld, never off the estimate
            assert m.upper is None and "one side of the estimate" in (m.note or ""), m.name
            continue
        assert m.lower is not None and m.upper is not None
        assert m.lower - 1e-9 <= m.estimate <= m.upper + 1e-9, m.name


def test_alt_test_nominal_numbers_use_accuracy_in_calibrate() -> None:
    """Category codes stored as numbers: at --level nominal the alt-test counts exact matches.

    The judge always answers 1 where the humans answer 2 and 3 where they answer 2 (off by one,
    never right); a human who agrees with the others half the time. By −RMSE the judge (error
    1) beats the human whose misses are 3 vs 1 (error 2); by accuracy it never matches.
    """
    from attune_judge.calibration import calibrate
    from attune_judge.data import Rating

    human, judge = [], []
    for k in range(60):
        item = f"i{k}"
        for h in ("h0", "h1"):
            human.append(Rating(item_id=item, rater=h, dimension="d", value=2, cluster=item))
        human.append(
            Rating(item_id=item, rater="h2", dimension="d", value=2 if k % 2 else 5, cluster=item)
        )
        judge.append(
            Rating(item_id=item, rater="j", dimension="d", value=1 if k % 2 else 3, cluster=item)
        )
    rep = calibrate(human, judge, measurement="nominal", B=100)
    alt = rep.dimensions[0].judges[0].alt_test
    assert alt is not None and alt.alignment == "accuracy"
    assert all(h.rho_judge < 1 for h in alt.humans)
    num = calibrate(human, judge, measurement="interval", B=100).dimensions[0].judges[0].alt_test
    assert num is not None and num.alignment == "neg_rmse"


def test_alt_test_needs_enough_items_and_says_so() -> None:
    items = [f"i{k}" for k in range(12)]
    vals = [["x" if k % 2 else "y"] * 4 for k in range(12)]
    t = RatingTable(items, ["h0", "h1", "h2", "judge"], vals, items)  # type: ignore[arg-type]
    res = alternative_annotator_test(t, ["h0", "h1", "h2"], "judge")
    assert res.humans == [] and not res.passed and res.winning_rate is None
    assert res.humans_left_out == ["h0", "h1", "h2"] and res.n_items == 12
    assert any("only 12 usable items (fewer than 30)" in w for w in res.warnings)
    assert any("the authors ask for 50–100" in w for w in res.warnings)
    assert any("the test was not run" in w for w in res.warnings)
    # explicitly lowering the bar is allowed, but not below 2
    assert alternative_annotator_test(t, ["h0", "h1", "h2"], "judge", min_items=10).passed
    with pytest.raises(UserError, match="min_items"):
        alternative_annotator_test(t, ["h0", "h1", "h2"], "judge", min_items=1)


def test_no_interval_that_excludes_its_estimate() -> None:
    """Hypothesis found these 11 items (x, y, conversation): x never equals y, and 196 of 200
    cluster resamples give Scott's π below its estimate (2 equal, 2 above). BCa's bias
    correction then took the top 1% of the replicates, [-0.25376, -0.25183], which excludes
    the estimate -0.25389, and so would the percentile interval: no interval is reported."""
    rows = [(1, 3, 2), (1, 4, 0), (1, 5, 0), (1, 5, 4), (2, 3, 0), (2, 3, 1), (2, 5, 1)]
    rows += [(2, 5, 5), (3, 4, 0), (3, 4, 3), (4, 5, 0)]
    x, y, cl = ([float(r[0]) for r in rows], [float(r[1]) for r in rows], [r[2] for r in rows])
    metrics = pair_agreement(x, y, cl, B=200, seed=0).metrics
    pi = metrics["scott_pi"]
    # Scott's π by hand: no agreement, pooled marginals of the 22 ratings
    pooled = np.bincount(np.array(x + y, dtype=int), minlength=6)[1:] / 22
    pe = float(np.sum(pooled**2))
    assert pi.estimate == pytest.approx((0 - pe) / (1 - pe), abs=1e-12)
    assert pi.lower is None and pi.upper is None
    assert "one side of the estimate" in (pi.note or "")
    # the rule on replicates directly: a percentile interval that would leave the estimate out
    reps = np.linspace(0.0, 1.0, 201)
    assert interval_endpoints(0.999, reps, method="percentile").lower is None
    kept = interval_endpoints(0.96, reps, method="percentile")
    assert kept.lower is not None and kept.upper is not None
    assert kept.lower <= 0.96 <= kept.upper
    # the same rule for BCa: its bias correction cannot bring the estimate back in
    jack = np.array([0.0, 0.0, 0.0, 1.0])
    assert interval_endpoints(0.99, reps, method="bca", jackknife=jack).lower is None
    bca = interval_endpoints(0.7, reps, method="bca", jackknife=jack)
    assert bca.method == "bca" and bca.lower is not None and bca.upper is not None
    assert bca.lower <= 0.7 <= bca.upper
