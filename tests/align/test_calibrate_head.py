"""The calibration head's statistics against independent implementations: the penalised
likelihood's gradient against finite differences, the unpenalised fit against statsmodels'
``OrderedModel``, κ_qw against statsmodels' ``cohens_kappa``, and rater offsets on data with a
strict rater."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

# private unit: the ordinal calibration head's fit and loss
from attune_judge.align._calibrate_proof import weighted_kappa_qw, weighted_rmse
from attune_judge.align._head import OrdinalData, fit_ordinal, ordinal_nll


def _simulate(
    n_items: int = 120, seed: int = 3, offsets: tuple[float, ...] = ()
) -> tuple[OrdinalData, np.ndarray]:
    """Items with 2 features; 4 levels; each rater's latent = x·w + offset + logistic noise."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n_items, 2))
    w = np.array([1.2, -0.7])
    cuts = np.array([-1.0, 0.2, 1.4])
    raters = offsets or (0.0,)
    item, rater, y = [], [], []
    for i in range(n_items):
        for r, b in enumerate(raters):
            latent = z[i] @ w + b + rng.logistic()
            item.append(i)
            rater.append(r if offsets else -1)
            y.append(int(np.searchsorted(cuts, latent)))
    d = OrdinalData(
        z=z,
        item=np.array(item),
        rater=np.array(rater),
        y=np.array(y),
        n_levels=4,
        n_raters=len(offsets),
    )
    return d, w


def test_the_gradient_is_the_derivative_of_the_penalised_likelihood() -> None:
    d, _ = _simulate(40, offsets=(0.0, 1.0, -0.5))
    rng = np.random.default_rng(0)
    x = np.concatenate([[-0.8, -0.2, 0.1], rng.normal(size=2), rng.normal(size=3)])
    value, grad = ordinal_nll(x, d, 0.7, 1.3)
    numeric = approx_fprime(x, lambda p: ordinal_nll(p, d, 0.7, 1.3)[0], 1e-6)
    assert value > 0
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4)


def test_the_unpenalised_fit_is_statsmodels_ordered_model() -> None:
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    d, _ = _simulate(150)
    head = fit_ordinal(d, lam_w=0.0, lam_b=0.0, levels=[1, 2, 3, 4])
    exog = d.z[d.item]
    ref = OrderedModel(d.y, exog, distr="logit").fit(method="bfgs", disp=False, maxiter=2000)
    ref_w = np.asarray(ref.params[:2])
    ref_cuts = np.asarray(ref.model.transform_threshold_params(ref.params))[1:-1]
    np.testing.assert_allclose(head.weights, ref_w, atol=1e-4)
    np.testing.assert_allclose(head.cuts, ref_cuts, atol=1e-4)
    a = np.concatenate([[head.cuts[0]], np.log(np.diff(head.cuts))])
    nll = ordinal_nll(np.concatenate([a, head.weights]), d)[0]
    assert -nll == pytest.approx(ref.llf, abs=1e-6)
    # the predicted probabilities are statsmodels' too
    np.testing.assert_allclose(
        head.probabilities(d.z[:5]), ref.model.predict(ref.params, exog=d.z[:5]), atol=1e-4
    )


def test_a_strict_rater_gets_a_lower_offset_and_new_raters_the_typical_one() -> None:
    d, w = _simulate(200, offsets=(0.0, -1.5, 0.8))
    head = fit_ordinal(d, lam_w=0.1, lam_b=1.0, levels=[0, 1, 2, 3], rater_ids=["a", "b", "c"])
    b = head.rater_offsets
    assert b["b"] < b["a"] < b["c"]
    # the differences between raters are recovered within the sampling error
    assert b["c"] - b["b"] == pytest.approx(2.3, abs=0.5)
    assert np.sign(head.weights).tolist() == np.sign(w).tolist()
    strict = head.expected(d.z[:20], "b")
    typical = head.expected(d.z[:20])
    assert np.all(strict < typical)


def test_kappa_qw_is_cohens_quadratic_kappa_and_rmse_is_plain() -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(5)
    h = rng.integers(0, 4, size=60).astype(float)
    p = np.clip(h + rng.integers(-1, 2, size=60), 0, 3).astype(float)
    table = np.zeros((4, 4))
    for a, b in zip(p.astype(int), h.astype(int), strict=True):
        table[a, b] += 1
    ref = cohens_kappa(table, wt="quadratic").kappa
    ours = float(weighted_kappa_qw(p, h, np.ones((1, 60)))[0])
    assert ours == pytest.approx(ref, abs=1e-12)
    # an item drawn twice counts twice: weights equal the expanded sample
    w = rng.integers(0, 3, size=60).astype(float)
    expanded_p, expanded_h = np.repeat(p, w.astype(int)), np.repeat(h, w.astype(int))
    rmse = float(np.sqrt(np.mean((expanded_p - expanded_h) ** 2)))
    assert float(weighted_rmse(p, h, w[None, :])[0]) == pytest.approx(rmse, abs=1e-12)


def test_the_overall_human_ceiling_is_each_persons_mean_against_the_others() -> None:
    from scipy import stats

    from attune_judge.align import calibration_proof

    # 6 items, people a and b on criteria x and y (c rates only x on item 0: left out of the
    # overall ceiling, which needs every criterion)
    a = [(0, 1), (1, 1), (2, 2), (2, 1), (0, 0), (1, 2)]
    b = [(1, 1), (1, 0), (2, 2), (1, 1), (0, 1), (2, 2)]
    raters = [
        {"a": dict(zip("xy", va, strict=True)), "b": dict(zip("xy", vb, strict=True))}
        for va, vb in zip(a, b, strict=True)
    ]
    raters[0]["c"] = {"x": 2}
    human = {
        c: [float(np.mean([v[c] for v in r.values() if c in v])) for r in raters] for c in "xy"
    }
    system = {c: [float(k) for k in range(6)] for c in "xy"}
    proof = calibration_proof(
        clusters=[f"c{k}" for k in range(6)],
        human=human,
        raters=raters,
        systems={"calibrated": system, "length": system},
        distributions={},
        levels={"x": [0, 1, 2], "y": [0, 1, 2]},
        headline="calibrated",
        n_failed=0,
        B=200,
    )
    own = [np.mean(va) for va in a] + [np.mean(vb) for vb in b]
    other = [np.mean(vb) for vb in b] + [np.mean(va) for va in a]
    ceiling = proof.criteria["overall"].human_ceiling
    assert ceiling["spearman"].estimate == pytest.approx(stats.spearmanr(own, other).statistic)
    rmse = float(np.sqrt(np.mean((np.array(own) - np.array(other)) ** 2)))
    assert ceiling["rmse"].estimate == pytest.approx(rmse)
