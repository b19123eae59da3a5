"""Labels weighted by 1 / inclusion probability (``annotate sample`` with unequal probabilities).

Checked independently: integer weights are frequency weights, so every weighted statistic must
equal the unweighted one on the data with each item repeated that many times — computed by the
``krippendorff`` package, statsmodels and SciPy on the repeated data (real labels: Kumar et al.
2025, three experts and GPT on one dimension). The weighted PPI mean's standard error is
statsmodels' cluster-robust WLS standard error of an intercept. Equal weights give today's
numbers exactly.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters as sm_aggregate
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from attune_judge import calibration as cal
from attune_judge.calibration import ratings_to_table
from attune_judge.data import Rating
from tests.conftest import DATASETS

DIM = "m_understood"


@pytest.fixture(scope="module")
def labels() -> tuple[list[Rating], list[Rating]]:
    from attune_judge.data.adapters import convert_empathic_communication

    ratings = convert_empathic_communication(DATASETS / "empathic-communication").ratings
    human = [r for r in ratings if r.rater_group == "experts" and r.dimension == DIM]
    gpt = [r for r in ratings if r.rater == "gpt" and r.dimension == DIM]
    return human, gpt


def _k(item: str) -> int:
    """A frequency weight 1..4 per item, fixed by the item id (no relation to the values)."""
    return 1 + sum(map(ord, item)) % 4


def _pairs(human: list[Rating], gpt: list[Rating]) -> tuple[list, list, list[str]]:
    """(expert1's value, GPT's value, cluster) on the items both rated, by item id."""
    e1 = {r.item_id: r.value for r in human if r.rater == "expert1"}
    g = {r.item_id: r.value for r in gpt}
    items = sorted(set(e1) & set(g))
    return [e1[i] for i in items], [g[i] for i in items], items


def test_pair_agreement_with_integer_weights_is_the_repeated_data(labels) -> None:
    x, y, items = _pairs(*labels)
    k = [_k(i) for i in items]
    assert len(items) == 50 and len(set(k)) == 4
    rx, ry, rc = (np.repeat(np.asarray(v, dtype=object), k).tolist() for v in (x, y, items))
    kw = {"B": 300, "seed": 5}
    weighted = cal.pair_agreement(x, y, items, weights=k, **kw)
    repeated = cal.pair_agreement(rx, ry, rc, **kw)  # copies share their item's cluster
    assert set(weighted.metrics) == set(repeated.metrics) == set(cal.PAIR_METRICS)
    for name, m in weighted.metrics.items():
        r = repeated.metrics[name]
        assert (m.estimate, m.lower, m.upper) == pytest.approx((r.estimate, r.lower, r.upper)), name
    # and the repeated data by other libraries
    fx, fy = np.asarray(rx, float), np.asarray(ry, float)
    est = {n: m.estimate for n, m in weighted.metrics.items()}
    assert est["spearman"] == pytest.approx(stats.spearmanr(fx, fy).statistic)
    assert est["kendall_tau_b"] == pytest.approx(stats.kendalltau(fx, fy).statistic)
    assert est["pearson"] == pytest.approx(stats.pearsonr(fx, fy).statistic)
    assert est["mae"] == pytest.approx(np.mean(np.abs(fx - fy)))
    assert est["raw_agreement"] == pytest.approx(np.mean(fx == fy))
    cats = sorted(set(fx) | set(fy))
    table = np.zeros((len(cats), len(cats)))
    np.add.at(table, ([cats.index(v) for v in fx], [cats.index(v) for v in fy]), 1)
    assert est["cohen_kappa"] == pytest.approx(cohens_kappa(table).kappa)
    assert est["cohen_kappa_linear"] == pytest.approx(cohens_kappa(table, wt="linear").kappa)
    assert est["cohen_kappa_quadratic"] == pytest.approx(cohens_kappa(table, wt="quadratic").kappa)
    # the weights change the figures (else this test could not fail)
    plain = cal.pair_agreement(x, y, items, **kw)
    assert plain.metrics["spearman"].estimate != pytest.approx(est["spearman"], abs=1e-3)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_of_the_weighted_coincidences_is_the_package_on_repeated_units(
    labels, level: str
) -> None:
    human, _ = labels
    table = ratings_to_table(human, DIM)
    table.weights = [float(_k(i)) for i in table.items]
    got = cal.krippendorff_alpha(table, level, B=200)  # type: ignore[arg-type]
    data = np.array(
        [[np.nan if v is None else v for v in row] for row in table.values], dtype=float
    ).T  # raters × units
    repeated = np.repeat(data, [_k(i) for i in table.items], axis=1)
    want = krippendorff.alpha(reliability_data=repeated, level_of_measurement=level)
    assert got.estimate == pytest.approx(want, rel=1e-10)
    assert got.lower is not None and got.lower < got.estimate < got.upper
    unweighted = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert abs(want - unweighted) > 1e-3


def test_fleiss_kappa_weighted_is_statsmodels_on_repeated_items(labels) -> None:
    human, _ = labels
    table = ratings_to_table(human, DIM)
    table.weights = [float(_k(i)) for i in table.items]
    got = cal.fleiss_kappa(table, B=200)
    rows = np.repeat(np.array(table.values, float), [_k(i) for i in table.items], axis=0)
    counts, _ = sm_aggregate(rows)
    assert got.estimate == pytest.approx(fleiss_kappa(counts))


def test_calibrate_weights_the_judge_vs_humans_figures(labels) -> None:
    human, gpt = labels
    weights = {r.item_id: float(_k(r.item_id)) for r in human}
    rep = cal.calibrate(human, gpt, B=200, weights=weights)
    d = rep.dimensions[0]
    assert any("weighted by 1/inclusion probability" in f for f in d.flags)
    assert any("alternative annotator test is NOT weighted" in f for f in d.flags)
    # the judge vs the humans' median: the median per item, repeated k times (by hand)
    by_item: dict[str, list[float]] = {}
    for r in human:
        by_item.setdefault(r.item_id, []).append(float(r.value))  # type: ignore[arg-type]
    g = {r.item_id: float(r.value) for r in gpt}  # type: ignore[arg-type]
    items = sorted(by_item)
    med = np.repeat([np.median(by_item[i]) for i in items], [_k(i) for i in items])
    jud = np.repeat([g[i] for i in items], [_k(i) for i in items])
    vs = d.judges[0].vs_humans.metrics
    assert vs["spearman"].estimate == pytest.approx(stats.spearmanr(jud, med).statistic)
    assert vs["mae"].estimate == pytest.approx(np.mean(np.abs(jud - med)))
    unweighted = cal.calibrate(human, gpt, B=200).dimensions[0]
    assert unweighted.flags == [f for f in d.flags if "inclusion probability" not in f]


def test_equal_weights_give_todays_ppi_figures_exactly() -> None:
    rng = np.random.default_rng(7)
    n = 240
    models = [f"m{i % 3}" for i in range(n)]
    clusters = [f"c{i // 3}" for i in range(n)]
    f = rng.uniform(size=n)
    y = [float(v + rng.normal(0, 0.1)) if rng.uniform() < 0.3 else None for v in f]
    today = cal.ppi_leaderboard(models, clusters, f, y)
    same = cal.ppi_leaderboard(models, clusters, f, y, weights=[1 / 0.3] * n)
    assert same.model_dump() == today.model_dump()
    other = cal.ppi_leaderboard(models, clusters, f, y, weights=[1 + i % 2 for i in range(n)])
    assert other.model_dump() != today.model_dump()


def test_weighted_ppi_is_the_hajek_formula_with_the_wls_cluster_se() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(3)
    n = 300
    clusters = np.arange(n) // 2
    f = rng.uniform(size=n)
    lab = rng.uniform(size=n) < np.where(f > 0.5, 0.5, 0.15)  # oversample high scores
    y = np.where(lab, f + rng.normal(0.1, 0.1, n), np.nan)
    w = np.where(f > 0.5, 1 / 0.5, 1 / 0.15)
    human = [None if np.isnan(v) else float(v) for v in y]
    board = cal.ppi_leaderboard(["m"] * n, clusters.tolist(), f, human, lam=1.0, weights=w)
    row = board.rows[0]
    hajek = float(np.sum(w[lab] * (y[lab] - f[lab])) / np.sum(w[lab]))
    assert row.ppi.estimate == pytest.approx(float(f.mean()) + hajek)  # classical PPI, λ = 1
    assert row.rectifier == pytest.approx(hajek)
    wls = sm.WLS(y[lab], np.ones((lab.sum(), 1)), weights=w[lab]).fit(
        cov_type="cluster", cov_kwds={"groups": clusters[lab]}
    )
    assert row.human_only.estimate == pytest.approx(float(wls.params[0]))
    assert row.human_only.se == pytest.approx(float(wls.bse[0]))
    assert row.judge_only.estimate == pytest.approx(float(f.mean()))


def _population(rng: np.random.Generator, n_conv: int = 1000) -> dict[str, np.ndarray]:
    """Two items per conversation; the judge's score f, a stratum (f above 0.5) and a human
    value y whose gap to the judge differs by stratum (the judge flatters low replies)."""
    n = 2 * n_conv
    f = rng.uniform(size=n)
    high = f > 0.5
    y = f + np.where(high, -0.05, 0.15) + rng.normal(0, 0.1, n)
    x5 = np.clip(np.round(1 + 4 * f), 1, 5)  # the judge's 1-5 level
    y5 = np.clip(x5 + np.where(high, 0, rng.integers(-1, 3, n)), 1, 5)  # worse on low
    return {"f": f, "high": high, "y": y, "x5": x5, "y5": y5, "conv": np.arange(n) // 2}


def _draw(rng: np.random.Generator, high: np.ndarray, n_low: int, n_high: int) -> np.ndarray:
    """A stratified draw without replacement (by item), oversampling the high stratum."""
    take = np.zeros(len(high), bool)
    for stratum, k in ((~high, n_low), (high, n_high)):
        take[rng.choice(np.flatnonzero(stratum), size=k, replace=False)] = True
    return take


def test_simulation_weighted_estimates_recover_the_population_with_nominal_coverage() -> None:
    rng = np.random.default_rng(2026)
    pop = _population(rng)
    high = pop["high"]
    pi = np.where(high, 90 / high.sum(), 30 / (~high).sum())  # each item's inclusion probability
    theta = float(pop["y"].mean())  # the population's mean human value
    mae = float(np.mean(np.abs(pop["x5"] - pop["y5"])))  # the population's judge-human MAE
    ppi_w, ppi_u, cover, mae_w, mae_u, mae_cover = [], [], 0, [], [], 0
    reps = 300
    for r in range(reps):
        lab = _draw(rng, high, 30, 90)
        human = [float(v) if s else None for v, s in zip(pop["y"], lab, strict=True)]
        args = (["m"] * len(lab), pop["conv"].tolist(), pop["f"], human)
        w = cal.ppi_leaderboard(*args, weights=(1 / pi).tolist()).rows[0].ppi
        ppi_w.append(w.estimate)
        ppi_u.append(cal.ppi_leaderboard(*args).rows[0].ppi.estimate)
        cover += w.lower <= theta <= w.upper
        if r < 150:  # the bootstrap ones: fewer replications
            kw = {"metrics": ["mae"], "B": 200, "seed": r, "method": "percentile"}
            xs, ys, cl = pop["x5"][lab].tolist(), pop["y5"][lab].tolist(), pop["conv"][lab]
            m = cal.pair_agreement(xs, ys, cl.tolist(), weights=(1 / pi[lab]).tolist(), **kw)
            m = m.metrics["mae"]
            mae_w.append(m.estimate)
            mae_u.append(cal.pair_agreement(xs, ys, cl.tolist(), **kw).metrics["mae"].estimate)
            mae_cover += m.lower <= mae <= m.upper
    se_ppi = np.std(ppi_w) / np.sqrt(reps)
    se_mae = np.std(mae_w) / np.sqrt(len(mae_w))
    # seen: θ 0.556, unweighted 0.543 (21 Monte Carlo SE off), weighted 0.556, coverage 0.977
    assert abs(np.mean(ppi_u) - theta) > 10 * se_ppi  # unweighted: biased (oversampled)
    assert abs(np.mean(ppi_w) - theta) < 3 * se_ppi  # weighted: unbiased
    assert 0.92 <= cover / reps <= 0.985, cover / reps
    # seen: MAE 0.463, unweighted 0.234, weighted 0.460; coverage 0.993: conservative, as the
    # cluster bootstrap does not resample within strata (the strata differ widely here)
    assert abs(np.mean(mae_u) - mae) > 10 * se_mae
    assert abs(np.mean(mae_w) - mae) < 3 * se_mae
    assert mae_cover / len(mae_w) >= 0.93, mae_cover / len(mae_w)


def test_many_distinct_values_weighted_rows_are_the_repeated_data() -> None:
    rng = np.random.default_rng(11)
    n = 90  # more distinct values than a contingency table takes: the row-weight path
    x = np.round(rng.normal(size=n), 3)
    y = np.round(x + rng.normal(0, 0.5, n), 3)
    clusters = [f"c{i // 3}" for i in range(n)]
    k = 1 + np.arange(n) % 3
    kw = {"B": 200, "seed": 1, "metrics": ["raw_agreement", "mae", "pearson", "spearman"]}
    got = cal.pair_agreement(x.tolist(), y.tolist(), clusters, weights=k.tolist(), **kw)
    assert got.categories == []  # not the table path
    rx, ry = np.repeat(x, k), np.repeat(y, k)
    rep = cal.pair_agreement(rx.tolist(), ry.tolist(), np.repeat(clusters, k).tolist(), **kw)
    for name, m in got.metrics.items():
        r = rep.metrics[name]
        assert (m.estimate, m.lower, m.upper) == pytest.approx((r.estimate, r.lower, r.upper)), name
    assert got.metrics["spearman"].estimate == pytest.approx(stats.spearmanr(rx, ry).statistic)
    assert got.metrics["pearson"].estimate == pytest.approx(stats.pearsonr(rx, ry).statistic)
    tau = cal.pair_agreement(x.tolist(), y.tolist(), clusters, weights=k.tolist(), B=50)
    assert tau.metrics["kendall_tau_b"].estimate is None  # said, not silently unweighted
    assert "weighted τ-b is not computed" in str(tau.metrics["kendall_tau_b"].undefined_reason)
