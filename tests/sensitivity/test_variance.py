"""Variance decomposition: a hand-computed ANOVA, recovery of known components, REML."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from attune_judge.sensitivity import variance_decomposition

# private unit: the variance-table kernels (numpy against statsmodels)
from attune_judge.sensitivity._variance import is_proportional


def test_two_factor_anova_matches_hand_computation() -> None:
    # y = model effect (A +1, B -1) + conversation effect (X +0.5, Y -0.5) + e, e = +-0.1 in
    # every cell (2 rows per cell, N = 8, grand mean 0, no interaction).
    rows = []
    for (m, a), (c, b) in itertools.product([("A", 1.0), ("B", -1.0)], [("X", 0.5), ("Y", -0.5)]):
        rows += [(m, c, a + b + 0.1), (m, c, a + b - 0.1)]
    models, convs, y = zip(*rows, strict=True)
    out = variance_decomposition(y, {"model": models, "conversation": convs}, method="anova")
    comp = {c.source: c for c in out.components}
    # SS_model = 8 * 1^2 = 8 (df 1), SS_conv = 8 * 0.5^2 = 2 (df 1), SS_e = 8 * 0.01 = 0.08
    # (df 8 - 3 = 5) -> MS_e = 0.016; k = (N - sum n_l^2 / N)/(L - 1) = (8 - 32/8)/1 = 4
    # sigma2_model = (8 - 0.016)/4 = 1.996, sigma2_conv = (2 - 0.016)/4 = 0.496
    assert comp["model"].variance == pytest.approx(1.996)
    assert comp["conversation"].variance == pytest.approx(0.496)
    assert comp["residual"].variance == pytest.approx(0.016)
    total = 1.996 + 0.496 + 0.016
    assert comp["model"].share == pytest.approx(1.996 / total)
    assert comp["model"].ss_share == pytest.approx(8 / 10.08)
    assert sum(c.share for c in out.components) == pytest.approx(1.0)
    assert out.method == "anova" and out.n == 8


def _simulate(seed: int = 7) -> tuple[np.ndarray, dict[str, list[str]], dict[str, float]]:
    """5 models x 30 conversations (2 or 3 turns) x 4 variants x 2 judges, additive effects.

    Returns the scores, the factors and the variance of the *realised* effects of each factor,
    computed independently of the code under test: given the effects, the method of moments
    estimates E[(MS_f - MS_e)/k_f | effects] = sum_l n_l (a_l - abar_w)^2 / ((L - 1) k_f),
    with abar_w the count-weighted mean (the plain sample variance for equal counts).
    """
    rng = np.random.default_rng(seed)
    effects = {
        "model": dict(zip("mABCDE"[1:], [0.30, 0.10, 0.0, -0.15, -0.25], strict=True)),
        "conversation": {f"c{i}": float(x) for i, x in enumerate(rng.normal(0, 0.14, 30))},
        "variant": {"v0": -0.15, "v1": -0.05, "v2": 0.05, "v3": 0.15},
        "judge": {"j0": -0.1, "j1": 0.1},
    }
    turns = {c: 2 + (i % 2) for i, c in enumerate(effects["conversation"])}
    cols: dict[str, list[str]] = {k: [] for k in effects}
    y = []
    for m, c, v, j in itertools.product(*[list(e) for e in effects.values()]):
        for _ in range(turns[c]):
            cols["model"].append(m)
            cols["conversation"].append(c)
            cols["variant"].append(v)
            cols["judge"].append(j)
            y.append(
                0.5
                + effects["model"][m]
                + effects["conversation"][c]
                + effects["variant"][v]
                + effects["judge"][j]
                + rng.normal(0, 0.1)
            )
    realised = {}
    N = len(y)
    for f, eff in effects.items():
        levels, counts = np.unique(cols[f], return_counts=True)
        a = np.array([eff[str(level)] for level in levels])
        abar = np.sum(counts * a) / N
        k = (N - np.sum(counts.astype(float) ** 2) / N) / (len(levels) - 1)
        realised[f] = float(np.sum(counts * (a - abar) ** 2) / ((len(levels) - 1) * k))
    realised["residual"] = 0.1**2
    return np.asarray(y), cols, realised


def test_anova_recovers_known_components_within_ten_percent() -> None:
    """Tolerance: every component within 10% (relative) of its realised value.

    Approximate Monte-Carlo sd of each estimate given the effects (residual sd 0.1, 3,000 rows):
    2 sigma_e sqrt(sum_l n_l delta_l^2) / ((L - 1) k) plus the error of MS_e, i.e. about 2% of the
    model and variant components and 4% of the judge component (two levels). With this seed the
    errors are -3.7% (model), +3.6% (conversation), +0.7% (variant), +5.5% (judge) and -1.3%
    (residual), all inside the stated 10%.
    """
    y, factors, realised = _simulate()
    assert is_proportional(factors)
    out = variance_decomposition(y, factors)
    assert out.method == "anova"
    got = {c.source: c.variance for c in out.components}
    assert list(got) == ["model", "conversation", "variant", "judge", "residual"]
    for source, value in realised.items():
        assert got[source] == pytest.approx(value, rel=0.10), source


def test_reml_and_anova_agree_on_a_balanced_design() -> None:
    # Balanced data (3 models x 10 conversations x 3 variants x 2 turns, N = 180). There the
    # fitted fixed effects are the marginal mean deviations, so mixedlm's fixed-factor variance
    # is v = SS_f / N, while the ANOVA's is (SS_f/(L-1) - MS_e)/(N/L); hence
    # anova = L/(L-1) * v - L * MS_e / N. The conversation intercept variance and the residual
    # are the ANOVA estimators themselves (REML = ANOVA on balanced data, none truncated).
    rng = np.random.default_rng(3)
    m_eff, c_eff = [0.2, 0.0, -0.2], rng.normal(0, 0.15, 10)
    rows = [
        (f"m{m}", f"c{c}", f"v{v}", m_eff[m] + c_eff[c] + 0.05 * v + rng.normal(0, 0.1))
        for m in range(3)
        for c in range(10)
        for v in range(3)
        for _ in range(2)
    ]
    models, convs, variants, y = zip(*rows, strict=True)
    factors = {"model": models, "conversation": convs, "variant": variants}
    anova = {
        c.source: c.variance for c in variance_decomposition(y, factors, method="anova").components
    }
    reml = {
        c.source: c.variance
        for c in variance_decomposition(y, factors, method="mixedlm").components
    }
    N, L, ms_e = 180, 3, anova["residual"]
    for source in ("model", "variant"):
        assert anova[source] == pytest.approx(L / (L - 1) * reml[source] - L * ms_e / N, rel=1e-3)
    assert reml["conversation"] == pytest.approx(anova["conversation"], rel=1e-3)
    assert reml["residual"] == pytest.approx(anova["residual"], rel=1e-3)


def test_unbalanced_design_uses_reml_and_anova_refuses_it() -> None:
    y, factors, _ = _simulate()
    keep = [
        i
        for i, (v, j) in enumerate(zip(factors["variant"], factors["judge"], strict=True))
        if not (v != "v0" and j == "j1")
    ]  # other judge only on the base rubric
    keep = [i for i in keep if factors["conversation"][i] in {f"c{k}" for k in range(8)}]
    sub = {f: [col[i] for i in keep] for f, col in factors.items()}
    assert not is_proportional(sub)
    with pytest.raises(ValueError, match="not balanced"):
        variance_decomposition(y[keep], sub, method="anova")
    out = variance_decomposition(y[keep], sub)
    assert out.method == "mixedlm"
    assert sum(c.share for c in out.components) == pytest.approx(1.0)


def test_single_level_factors_are_dropped() -> None:
    out = variance_decomposition(
        [0.1, 0.2, 0.3, 0.5, 0.4, 0.6],
        {"model": list("aabbcc"), "judge": ["j"] * 6},
    )
    assert [c.source for c in out.components] == ["model", "residual"]
    assert out.dropped_factors == ["judge"]


def test_group_mean_table_equals_statsmodels_anova() -> None:
    # the fast path for large designs must give statsmodels' type-I table exactly
    from attune_judge.sensitivity._variance import _table_numpy, _table_statsmodels

    y, factors, _ = _simulate()
    cols = {f: np.asarray(v, dtype=object) for f, v in factors.items()}
    names = list(cols)
    fast, reference = _table_numpy(y, cols, names), _table_statsmodels(y, cols, names)
    assert set(fast) == set(reference) == {*names, "Residual"}
    for key, (ss, df) in reference.items():
        assert fast[key][0] == pytest.approx(ss, rel=1e-9), key
        assert fast[key][1] == df, key
