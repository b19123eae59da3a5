"""The sensitivity analysis on hand-made score tables."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attune_judge.calibration import SensitivityAnalysis
from attune_judge.sensitivity import CriterionTable, ScoreTable, analyze_sensitivity

# base:    x: c1 [0.8, 0.6], c2 [0.7], c3 [0.9]   y: c1 [0.5], c2 [0.6, 0.4], c3 [0.5]
# lowered: x: c1 [0.4, 0.4], c2 [0.5], c3 [0.3]   y as in base
# shifted: every base score + 0.05
BASE = {
    "x": [("c1", 0.8), ("c1", 0.6), ("c2", 0.7), ("c3", 0.9)],
    "y": [("c1", 0.5), ("c2", 0.6), ("c2", 0.4), ("c3", 0.5)],
}
LOWERED_X = [("c1", 0.4), ("c1", 0.4), ("c2", 0.5), ("c3", 0.3)]


def _table() -> ScoreTable:
    rows = []
    for variant in ("base", "lowered", "shifted"):
        for model, scores in BASE.items():
            if variant == "lowered" and model == "x":
                scores = LOWERED_X
            for t, (conv, s) in enumerate(scores):
                rows.append((variant, model, conv, t, s + (0.05 if variant == "shifted" else 0)))
    return ScoreTable.from_columns(*zip(*rows, strict=True))


@pytest.fixture(scope="module")
def result() -> SensitivityAnalysis:
    return analyze_sensitivity(_table(), B=2_000, seed=0, alpha=0.05, tau_threshold=0.5)


def test_means_ranks_and_shifts_match_hand_computation(result: SensitivityAnalysis) -> None:
    base = {m.model: m for m in result.ranking("base").models}
    # x: (0.8 + 0.6 + 0.7 + 0.9)/4 = 0.75; y: (0.5 + 0.6 + 0.4 + 0.5)/4 = 0.5
    assert base["x"].score.estimate == pytest.approx(0.75)
    assert base["y"].score.estimate == pytest.approx(0.5)
    assert (base["x"].rank, base["y"].rank) == (1, 2)
    lowered = {m.model: m for m in result.ranking("lowered").models}
    # x: (0.4 + 0.4 + 0.5 + 0.3)/4 = 0.4 -> shift 0.4 - 0.75 = -0.35; y unchanged
    assert lowered["x"].shift is not None and lowered["x"].shift.estimate == pytest.approx(-0.35)
    assert (lowered["y"].rank, lowered["x"].rank) == (1, 2)
    shifted = {m.model: m for m in result.ranking("shifted").models}
    # adding 0.05 to every score adds exactly 0.05 to every replicate's ratio mean
    s = shifted["x"].shift
    assert s is not None
    assert (s.estimate, s.lower, s.upper) == pytest.approx((0.05, 0.05, 0.05))


def test_flip_inside_the_intervals_is_not_significant_but_tau_flags_it(
    result: SensitivityAnalysis,
) -> None:
    [pair] = [p for p in result.pairs if p.variant == "lowered"]
    assert (pair.model_a, pair.model_b) == ("x", "y")
    assert pair.base_diff == pytest.approx(0.25) and pair.variant_diff == pytest.approx(-0.1)
    assert pair.flipped
    # per-conversation means of x under 'lowered': 0.4, 0.5, 0.3; of y: 0.5, 0.5, 0.5. A
    # replicate's x - y is 0 only when all weight falls on c2 (prob (1/3)^3 = 1/27 = 3.7%),
    # negative otherwise; 3.7% > 2.5% so the 97.5% quantile (upper end) is exactly 0:
    # the interval touches 0, the flip is not significant and lies inside the intervals.
    assert pair.variant_upper == pytest.approx(0.0)
    assert not pair.significant and pair.inside_intervals
    # base: x beats y in every conversation, lowered: never -> tau-b = -1 on every replicate
    # where it is defined, so the interval is [-1, -1] < threshold 0.5: unstable by tau.
    verdict = result.verdict("lowered")
    assert verdict.tau == pytest.approx(-1.0) and verdict.tau_upper == pytest.approx(-1.0)
    assert not verdict.stable and verdict.n_flips == 1 and verdict.n_significant_flips == 0
    assert verdict.reasons == ["Kendall tau upper bound -1.000 is below the threshold 0.5"]


def test_constant_shift_is_stable(result: SensitivityAnalysis) -> None:
    verdict = result.verdict("shifted")
    # τ = 1 on every replicate, but from 3 conversations: no claim either way (issue 17)
    assert verdict.verdict == "inconclusive" and not verdict.stable
    assert verdict.reasons == ["only 3 conversations (fewer than 10): no claim either way"]
    assert verdict.n_flips == 0 and verdict.tau == pytest.approx(1.0)
    assert [p.flipped for p in result.pairs if p.variant == "shifted"] == [False]


def test_bonferroni_level_and_rule_are_recorded(result: SensitivityAnalysis) -> None:
    # two models -> one pair -> Bonferroni level 1 - 0.05/1
    assert result.pair_level == pytest.approx(0.95)
    assert "significant flip" in result.rule
    assert result.variants == ["base", "lowered", "shifted"]


def _simulated(swap: float, n_conv: int = 40, seed: int = 2) -> ScoreTable:
    """Models a (0.6) > b (0.5) > c (0.3) in the base; the variant moves a to 0.5 - swap."""
    rng = np.random.default_rng(seed)
    conv = rng.normal(0, 0.05, n_conv)
    rows = []
    for variant, levels in (("base", (0.6, 0.5, 0.3)), ("v", (0.5 - swap, 0.5, 0.3))):
        for m, mu in zip("abc", levels, strict=True):
            for c in range(n_conv):
                for t in range(3):
                    rows.append((variant, m, f"c{c}", t, mu + conv[c] + rng.normal(0, 0.1)))
    return ScoreTable.from_columns(*zip(*rows, strict=True))


def test_large_swap_is_a_significant_flip_and_a_tiny_one_is_not() -> None:
    big = analyze_sensitivity(_simulated(swap=0.15), B=1_000, rank_sets=False)
    [flip] = big.flips
    assert (flip.model_a, flip.model_b) == ("a", "b") and flip.significant
    assert not big.verdict("v").stable
    # a - b under the variant is -0.005 on average, far inside its interval (sd ~0.013)
    tiny = analyze_sensitivity(_simulated(swap=0.005), B=1_000, rank_sets=False)
    assert all(not p.significant for p in tiny.pairs)
    flipped = [p for p in tiny.pairs if p.flipped]
    assert [(p.model_a, p.model_b) for p in flipped] == [("a", "b")]
    # not unstable; but τ's interval [1/3, 1] reaches below the threshold: not shown stable
    assert flipped[0].inside_intervals and tiny.verdict("v").verdict == "inconclusive"


def test_identical_variant_has_tau_one_and_zero_shifts() -> None:
    table = _table()
    mask = table.variant == "base"
    twin = ScoreTable.from_columns(
        np.concatenate([table.variant[mask], np.full(mask.sum(), "twin")]),
        np.concatenate([table.model[mask]] * 2),
        np.concatenate([table.conversation[mask]] * 2),
        np.concatenate([table.turn[mask]] * 2),
        np.concatenate([table.score[mask]] * 2),
    )
    out = analyze_sensitivity(twin, B=300)
    verdict = out.verdict("twin")
    assert verdict.verdict == "inconclusive"  # 3 conversations
    assert verdict.tau == 1.0 and verdict.tau_upper == 1.0 and verdict.tau_lower == 1.0
    for m in out.ranking("twin").models:
        assert m.shift is not None
        assert (m.shift.estimate, m.shift.lower, m.shift.upper) == (0.0, 0.0, 0.0)


def test_criterion_shift_matches_hand_computation() -> None:
    # criterion 'warmth', pooled over models: base c1 [0.5, 0.7], c2 [0.3]; v c1 [0.6], c2 [0.6]
    # base mean (0.5 + 0.7 + 0.3)/3 = 0.5, variant (0.6 + 0.6)/2 = 0.6 -> shift 0.1
    crit = CriterionTable.from_columns(
        ["base", "base", "base", "v", "v"],
        ["x", "y", "x", "x", "y"],
        ["c1", "c1", "c2", "c1", "c2"],
        ["warmth"] * 5,
        [0.5, 0.7, 0.3, 0.6, 0.6],
    )
    out = analyze_sensitivity(
        ScoreTable.from_columns(
            ["base", "base", "v", "v"],
            ["x", "y", "x", "y"],
            ["c1", "c2", "c1", "c2"],
            [1, 1, 1, 1],
            [0.5, 0.4, 0.5, 0.4],
        ),
        criteria=crit,
        B=300,
    )
    [shift] = out.criterion_shifts
    assert (shift.variant, shift.criterion) == ("v", "warmth")
    assert shift.base_mean == pytest.approx(0.5) and shift.variant_mean == pytest.approx(0.6)
    assert shift.shift.estimate == pytest.approx(0.1)


def test_missing_scores_are_counted_and_base_must_exist() -> None:
    table = ScoreTable.from_columns(
        ["base", "base", "base", "base", "v", "v", "v", "v"],
        ["x", "y", "x", "y", "x", "y", "x", "y"],
        ["c1", "c1", "c2", "c2", "c1", "c1", "c2", "c2"],
        [1] * 8,
        [0.9, 0.1, 0.8, 0.2, 0.9, np.nan, 0.8, 0.2],
    )
    out = analyze_sensitivity(table, B=300)
    assert out.ranking("v").n_missing == 1 and out.ranking("v").n_scores == 3
    with pytest.raises(ValueError, match="base variant 'nope'"):
        analyze_sensitivity(table, base="nope")


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scale=st.floats(0.1, 3.0),
    offset=st.floats(-1.0, 1.0),
    n_models=st.integers(2, 4),
)
def test_an_increasing_affine_variant_never_flips(
    seed: int, scale: float, offset: float, n_models: int
) -> None:
    # a * s + b with a > 0 keeps every replicate's order of ratio means: tau = 1 everywhere
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_models):
        for c in range(12):
            for t in range(int(rng.integers(1, 4))):
                s = float(rng.uniform(0, 1))
                rows.append(("base", f"m{m}", f"c{c}", t, s))
                rows.append(("affine", f"m{m}", f"c{c}", t, scale * s + offset))
    out = analyze_sensitivity(
        ScoreTable.from_columns(*zip(*rows, strict=True)), B=200, seed=seed, rank_sets=False
    )
    verdict = out.verdict("affine")
    assert verdict.stable and verdict.n_flips == 0
    assert verdict.tau == pytest.approx(1.0) and verdict.tau_upper == pytest.approx(1.0)


def _two_models(base_gap: float, variant_gap: float, n_clusters: int, noise: float) -> ScoreTable:
    """m1 − m2 = ``base_gap`` in the base and ``variant_gap`` in the variant, exactly (the
    noise of each variant and model has mean 0 over the conversations)."""
    rng = np.random.default_rng(0)
    rows = []
    for variant, gap in (("base", base_gap), ("v", variant_gap)):
        e = rng.normal(0, noise, (n_clusters, 2))
        e -= e.mean(axis=0)
        for c in range(n_clusters):
            rows.append((variant, "m1", f"c{c}", 0, 0.5 + gap / 2 + e[c, 0]))
            rows.append((variant, "m2", f"c{c}", 0, 0.5 - gap / 2 + e[c, 1]))
    return ScoreTable.from_columns(*zip(*rows, strict=True))


def test_verdict_comes_from_the_interval_not_the_point() -> None:
    """A fully reversed ranking (τ = −1) whose interval is [−1, 1] is not "stable"."""

    def verdict(base_gap: float, variant_gap: float, n_clusters: int = 40, noise: float = 0.05):
        table = _two_models(base_gap, variant_gap, n_clusters, noise)
        return analyze_sensitivity(table, B=200, seed=0, rank_sets=False).verdict("v")

    # two models 0.01 apart, reversed, under noise 0.2: τ = −1, its interval [−1, 1]
    reversed_wide = verdict(0.01, -0.01, noise=0.2)
    assert reversed_wide.tau == -1.0 and reversed_wide.tau_upper == 1.0
    assert reversed_wide.verdict == "inconclusive" and not reversed_wide.stable
    assert "reaches below the threshold" in reversed_wide.reasons[0]
    reversed_clear = verdict(0.3, -0.3)  # τ = −1 in every replicate
    assert reversed_clear.tau_upper == -1.0 and reversed_clear.verdict == "unstable"
    assert verdict(0.3, 0.3).verdict == "stable"
    assert verdict(0.3, 0.3, n_clusters=4).verdict == "inconclusive"  # too few conversations
