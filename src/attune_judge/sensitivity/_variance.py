"""Variance decomposition of judge scores into model, conversation, variant and judge parts.

The additive random-effects model ``y = μ + a_model + c_conversation + v_variant + j_judge + e``
(all effects independent, zero mean) is estimated in one of two ways:

``anova``
    Type-I ANOVA (statsmodels ``ols`` + ``anova_lm``) and the method of moments. When every
    pair of factors has proportional frequencies (``n_ab = n_a n_b / N``; true of a complete
    sensitivity run, even with conversations of different lengths) the main effects are
    orthogonal and ``E[MS_f] = σ²_e + k_f σ²_f`` with ``k_f = (N − Σ_l n_l² / N) / (L_f − 1)``
    (``N / L_f`` for equal counts), so ``σ̂²_f = (MS_f − MS_e) / k_f``; negative estimates are
    set to 0 and flagged. Interactions are pooled into the residual. Designs larger than
    ``_MAX_DESIGN_CELLS`` dummy-matrix entries get the same table from group means
    (``Σ_l n_l (ȳ_l − ȳ)²``, exact for orthogonal main effects) instead of a 200-column QR.
``mixedlm``
    For unbalanced designs (a judge model run only with the base rubric, failed judgments):
    REML fit (statsmodels ``MixedLM``) with a random intercept per conversation and the other
    factors (few levels each) as fixed effects; a fixed factor's component is the variance over
    rows of its fitted contribution ``X_f β̂_f`` (the population variance of its effects, where
    the ANOVA estimates their sample variance: a factor (L − 1)/L apart for equal counts).
    Crossed random effects for every factor (``vc_formula``) would be the textbook model but
    take minutes on a few thousand rows; this fit takes about a second.

``auto`` uses ``anova`` when the frequencies are proportional and ``mixedlm`` otherwise.
A factor with a single level is dropped (it explains nothing).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from attune_judge.calibration import VarianceComponent, VarianceDecomposition
from attune_judge.sensitivity._table import FloatArray

__all__ = ["FACTOR_ORDER", "is_proportional", "variance_decomposition"]

FACTOR_ORDER = ("model", "conversation", "variant", "judge")
"""Factors in the order they are reported (others follow, sorted)."""

_MAX_DESIGN_CELLS = 2_000_000
"""Largest dummy design (rows × columns) fitted with statsmodels ols; above it the ANOVA table
comes from group means (identical under proportional frequencies)."""

_NAME_OK = set("abcdefghijklmnopqrstuvwxyz_")
"""Characters allowed in factor names (they go into a statsmodels formula)."""


def is_proportional(factors: Mapping[str, Sequence[str]], *, rtol: float = 1e-9) -> bool:
    """Whether every pair of factors has proportional cell frequencies (orthogonal effects)."""
    import pandas as pd

    names = list(factors)
    if not names:
        return True
    n = len(next(iter(factors.values())))
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            tab = pd.crosstab(np.asarray(factors[a]), np.asarray(factors[b])).to_numpy(float)
            expected = np.outer(tab.sum(1), tab.sum(0)) / n
            if not np.allclose(tab, expected, rtol=rtol, atol=1e-9):
                return False
    return True


def _ordered(names: Sequence[str]) -> list[str]:
    first = [f for f in FACTOR_ORDER if f in names]
    return first + sorted(f for f in names if f not in FACTOR_ORDER)


def _table_statsmodels(
    y: FloatArray, factors: dict[str, np.ndarray], names: list[str]
) -> dict[str, tuple[float, float]]:
    """(sum of squares, df) per factor and ``Residual``: statsmodels ols + type-I anova_lm."""
    import pandas as pd
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df = pd.DataFrame({"score": y, **{f: factors[f] for f in names}})
    fit = smf.ols(_formula(names), data=df).fit(method="qr")
    table = anova_lm(fit, typ=1)
    out = {
        f: (float(table.loc[f"C({f})", "sum_sq"]), float(table.loc[f"C({f})", "df"])) for f in names
    }
    out["Residual"] = (float(table.loc["Residual", "sum_sq"]), float(table.loc["Residual", "df"]))
    return out


def _table_numpy(
    y: FloatArray, factors: dict[str, np.ndarray], names: list[str]
) -> dict[str, tuple[float, float]]:
    """The same table from group means: with proportional frequencies the main effects are
    orthogonal, so the type-I sum of squares of f is ``Σ_l n_l (ȳ_l − ȳ)²``."""
    N = len(y)
    ybar = float(np.mean(y))
    out: dict[str, tuple[float, float]] = {}
    for f in names:
        _, idx = np.unique(factors[f], return_inverse=True)
        n = np.bincount(idx).astype(np.float64)
        means = np.bincount(idx, weights=y) / n
        out[f] = (float(np.sum(n * (means - ybar) ** 2)), float(len(n) - 1))
    ss_total = float(np.sum((y - ybar) ** 2))
    df_e = N - 1 - sum(df for _, df in out.values())
    out["Residual"] = (ss_total - sum(ss for ss, _ in out.values()), float(df_e))
    return out


def _formula(names: list[str]) -> str:
    return "score ~ " + " + ".join(f"C({f})" for f in names)


def _anova(
    y: FloatArray, factors: dict[str, np.ndarray], names: list[str]
) -> tuple[str, list[VarianceComponent], str]:
    n_columns = 1 + sum(len(np.unique(factors[f])) - 1 for f in names)
    small = len(y) * n_columns <= _MAX_DESIGN_CELLS
    table = (_table_statsmodels if small else _table_numpy)(y, factors, names)
    note = (
        ""
        if small
        else (
            f"{len(y)} x {n_columns} design: sums of squares from group means (equal to "
            "statsmodels' type-I anova_lm under proportional frequencies, much faster)"
        )
    )
    formula = _formula(names)
    ss_e, df_e = table["Residual"]
    ms_e = ss_e / df_e
    ss_total = sum(ss for ss, _ in table.values())
    comps: list[VarianceComponent] = []
    raw: dict[str, float] = {}
    N = len(y)
    for f in names:
        ss_f, df_f = table[f]
        _, counts = np.unique(factors[f], return_counts=True)
        k = (N - float(np.sum(counts.astype(float) ** 2)) / N) / (len(counts) - 1)
        raw[f] = (ss_f / df_f - ms_e) / k
    total = sum(max(0.0, v) for v in raw.values()) + ms_e
    for f in names:
        comps.append(
            VarianceComponent(
                source=f,
                levels=len(np.unique(factors[f])),
                variance=max(0.0, raw[f]),
                share=max(0.0, raw[f]) / total if total > 0 else 0.0,
                ss_share=table[f][0] / ss_total if ss_total else None,
                truncated=raw[f] < 0,
            )
        )
    comps.append(
        VarianceComponent(
            source="residual",
            levels=N,
            variance=ms_e,
            share=ms_e / total if total > 0 else 0.0,
            ss_share=ss_e / ss_total if ss_total else None,
        )
    )
    return formula, comps, note


def _mixedlm(
    y: FloatArray, factors: dict[str, np.ndarray], names: list[str]
) -> tuple[str, list[VarianceComponent], str]:
    """REML fit: conversation as a random intercept, the other factors as fixed effects.

    A fixed factor's variance is the (population) variance over rows of its fitted
    contribution ``X_f β̂_f``; the conversation's is the random-intercept variance.
    """
    import pandas as pd
    import statsmodels.formula.api as smf

    fixed = [f for f in names if f != "conversation"]
    df = pd.DataFrame({"score": y, **{f: factors[f] for f in names}})
    formula = "score ~ " + (" + ".join(f"C({f})" for f in fixed) or "1")
    est: dict[str, float] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if "conversation" in names:
            model = smf.mixedlm(formula, df, groups="conversation")
            fit = model.fit(reml=True)
            est["conversation"] = float(np.asarray(fit.cov_re)[0, 0])
            beta = np.asarray(fit.fe_params, dtype=float)
            resid = float(fit.scale)
        else:
            model = smf.ols(formula, df)
            ols = model.fit(method="qr")
            beta = np.asarray(ols.params, dtype=float)
            resid = float(ols.scale)
    exog = np.asarray(model.exog, dtype=float)
    columns = list(model.exog_names)
    for f in fixed:
        cols = [i for i, c in enumerate(columns) if c.startswith(f"C({f})[")]
        est[f] = float(np.var(exog[:, cols] @ beta[cols]))
    total = sum(max(0.0, est[f]) for f in names) + resid
    comps = [
        VarianceComponent(
            source=f,
            levels=len(np.unique(factors[f])),
            variance=max(0.0, est[f]),
            share=max(0.0, est[f]) / total if total > 0 else 0.0,
            truncated=est[f] < 0,
        )
        for f in names
    ]
    comps.append(
        VarianceComponent(
            source="residual", levels=len(y), variance=resid, share=resid / total if total else 0.0
        )
    )
    messages = sorted({str(w.message) for w in caught})
    note = ("statsmodels: " + "; ".join(messages)) if messages else ""
    described = formula + (", random intercept per conversation" if "conversation" in names else "")
    return described, comps, note


def variance_decomposition(
    scores: Sequence[float] | FloatArray,
    factors: Mapping[str, Sequence[object]],
    *,
    method: Literal["auto", "anova", "mixedlm"] = "auto",
) -> VarianceDecomposition:
    """Split score variance into one component per factor plus a residual.

    Parameters
    ----------
    scores
        One score per row (NaN rows are dropped).
    factors
        Factor name → level per row (usually ``model``, ``conversation``, ``variant`` and
        ``judge``). Names must be lower-case letters and underscores.
    method
        ``anova`` (method of moments; needs proportional frequencies), ``mixedlm`` (REML),
        or ``auto``.

    Returns
    -------
    VarianceDecomposition
        Components in :data:`FACTOR_ORDER`, then the residual; shares sum to 1.

    Raises
    ------
    ValueError
        Bad factor names or lengths, fewer than two rows per parameter, or ``anova`` asked of
        a design without proportional frequencies.
    """
    y = np.asarray(scores, dtype=np.float64)
    for name, col in factors.items():
        if not name or set(name) - _NAME_OK:
            raise ValueError(f"factor name {name!r}: use lower-case letters and underscores")
        if len(col) != len(y):
            raise ValueError(f"factor {name!r} has {len(col)} values for {len(y)} scores")
    keep = np.isfinite(y)
    y = y[keep]
    cols = {f: np.asarray([str(v) for v in col], dtype=object)[keep] for f, col in factors.items()}
    names = _ordered([f for f in cols if len(np.unique(cols[f])) >= 2])
    dropped = _ordered([f for f in cols if f not in names])
    n_params = 1 + sum(len(np.unique(cols[f])) - 1 for f in names)
    if len(y) <= n_params:
        raise ValueError(
            f"{len(y)} scores cannot estimate {n_params} effects; a variance decomposition "
            "needs more scores than factor levels"
        )
    proportional = is_proportional({f: cols[f].tolist() for f in names})
    chosen: Literal["anova", "mixedlm"]
    if method == "auto":
        chosen = "anova" if proportional else "mixedlm"
    elif method == "anova" and not proportional:
        raise ValueError(
            "the design is not balanced (factor frequencies are not proportional); "
            "use method='mixedlm' or 'auto'"
        )
    else:
        chosen = method
    if chosen == "anova":
        formula, comps, extra = _anova(y, cols, names)
    else:
        formula, comps, extra = _mixedlm(y, cols, names)
    note = "share = component variance / sum of all components; interactions are pooled into "
    if chosen == "anova":
        note += "the residual (random-effects method of moments); ss_share = share of the total "
        note += "sum of squares (eta squared)"
    else:
        note += (
            "the residual; conversation is a random intercept, the other factors are fixed "
            "effects whose component is the variance of their fitted contribution"
        )
    if method == "auto" and chosen == "mixedlm":
        note += "; frequencies not proportional, so REML (mixedlm) was used"
    if extra:
        note += f"; {extra}"
    return VarianceDecomposition(
        method=chosen,
        formula=formula,
        components=comps,
        n=len(y),
        dropped_factors=dropped,
        note=note,
    )
