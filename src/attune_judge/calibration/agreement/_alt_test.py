"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025).

For each human j (leave-one-out) and each item i that j and at least one other human rated:
the judge's alignment ``S(f, i, j)`` and j's alignment ``S(h_j, i, j)`` with the remaining
humans (mean accuracy for categories, −RMSE for numbers). ``W^f_i = 1[S_f ≥ S_h]`` and
``W^h_i = 1[S_h ≥ S_f]``; ``ρ^f_j``, ``ρ^h_j`` are their means (advantage probabilities).
H0_j: ``ρ^f_j ≤ ρ^h_j − ε`` is tested with a one-sided one-sample t-test of
``d_i = W^h_i − W^f_i`` against ``ε`` (alternative: mean below ε). The p-values of all humans are
corrected for the false discovery rate (Benjamini–Yekutieli by default, or Benjamini–Hochberg);
the winning rate ω is the share of humans whose H0 is rejected. The judge passes when ω ≥ 0.5.
ε encodes the cost-benefit of the judge: the authors suggest 0.2 for experts, 0.15 for skilled
annotators, 0.1 for crowd workers.

Alignment follows the level of measurement, not the storage type: categories (nominal labels,
even when stored as numbers) use accuracy, numeric scales −RMSE (``alignment="auto"`` picks
accuracy for non-numeric values only; ``calibrate --measurement nominal`` passes ``accuracy``).

Sample size: the authors ask for 50–100 instances annotated by at least two (better three)
humans. A human with fewer than ``min_items`` (30) usable items is left out with a message — a
one-sample t-test of a 0/±1 variable on fewer items is not trustworthy — and fewer than
``RECOMMENDED_ITEMS`` (50) instances overall, or fewer than three humans, give a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from attune_judge.calibration._results import ResultModel
from attune_judge.calibration.agreement._table import RatingTable
from attune_judge.errors import UserError

__all__ = [
    "MIN_ITEMS",
    "RECOMMENDED_ITEMS",
    "AltTestHuman",
    "AltTestResult",
    "alternative_annotator_test",
    "fdr_adjust",
]

MIN_ITEMS = 30
"""Fewest usable items for a human to be tested (the per-human t-test)."""
RECOMMENDED_ITEMS = 50
"""Fewest instances the authors ask for (50–100, Calderon et al. 2025)."""


def fdr_adjust(p: Sequence[float], method: Literal["by", "bh"] = "by") -> list[float]:
    """Benjamini–Hochberg / Benjamini–Yekutieli adjusted p-values (step-up, monotone)."""
    pv = np.asarray(p, dtype=np.float64)
    m = len(pv)
    if m == 0:
        return []
    c = float(np.sum(1.0 / np.arange(1, m + 1))) if method == "by" else 1.0
    order = np.argsort(pv)
    ranked = pv[order] * m * c / np.arange(1, m + 1)
    adj = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.clip(adj, 0, 1)
    return out.tolist()


class AltTestHuman(ResultModel):
    """Result for one left-out human."""

    human: str
    """The left-out human."""
    n: int
    """Items used (rated by this human, the judge and at least one other human)."""
    rho_judge: float
    """ρ^f: share of items where the judge aligns at least as well as the human."""
    rho_human: float
    """ρ^h: share of items where the human aligns at least as well as the judge."""
    t: float | None
    """t statistic of ``d = W^h − W^f`` against ε (``None`` when d is constant)."""
    p_value: float
    """One-sided p-value."""
    p_adjusted: float
    """FDR-adjusted p-value."""
    judge_wins: bool
    """H0 rejected: the judge is at least as good an alternative as this human (given ε)."""


class AltTestResult(ResultModel):
    """The alt-test for one judge."""

    judge: str
    """Judge (rater name)."""
    epsilon: float
    """Cost-benefit margin ε."""
    alpha: float
    """Significance level of the FDR procedure."""
    fdr: str
    """``by`` (Benjamini–Yekutieli) or ``bh`` (Benjamini–Hochberg)."""
    alignment: str
    """``accuracy`` (categories) or ``neg_rmse`` (numbers)."""
    humans: list[AltTestHuman]
    """One entry per human with enough items."""
    winning_rate: float | None
    """ω: share of humans the judge wins against; ``None`` without humans."""
    advantage_probability: float | None
    """Mean ρ^f over humans (compares judges)."""
    passed: bool
    """ω ≥ 0.5."""
    warnings: list[str]
    """Caveats (humans left out for too few items, fewer than 50 instances, fewer than three
    humans)."""
    n_items: int = 0
    """Instances rated by the judge and at least two humans."""
    min_items: int = MIN_ITEMS
    """Fewest usable items a human needed to be tested."""
    humans_left_out: list[str] = Field(default_factory=list)
    """Humans with fewer than ``min_items`` usable items."""


def _align(target: float | str, others: list[float | str], numeric: bool) -> float:
    if numeric:
        diff = np.asarray(others, dtype=float) - float(target)
        return float(-np.sqrt(np.mean(diff**2)))
    return float(np.mean([o == target for o in others]))


def _t_test(d: np.ndarray, epsilon: float) -> tuple[float | None, float]:
    from scipy import stats

    sd = float(np.std(d, ddof=1)) if len(d) > 1 else 0.0
    if sd == 0:
        return None, 0.0 if float(np.mean(d)) < epsilon else 1.0
    res = stats.ttest_1samp(d, epsilon, alternative="less")
    return float(res.statistic), float(res.pvalue)


def alternative_annotator_test(
    table: RatingTable,
    humans: Sequence[str],
    judge: str,
    *,
    epsilon: float = 0.2,
    alpha: float = 0.05,
    fdr: Literal["by", "bh"] = "by",
    alignment: Literal["auto", "accuracy", "neg_rmse"] = "auto",
    min_items: int = MIN_ITEMS,
) -> AltTestResult:
    """Run the alt-test of ``judge`` against ``humans`` on one table.

    Parameters
    ----------
    table, humans, judge
        The ratings; the judge is one column of the table.
    epsilon, alpha, fdr
        Cost-benefit margin ε, significance level, and FDR procedure (``by`` or ``bh``).
    alignment
        ``accuracy`` for categories, ``neg_rmse`` for numeric scales; ``auto`` uses accuracy
        for non-numeric values and −RMSE otherwise (pass ``accuracy`` for nominal labels
        stored as numbers).
    min_items
        Fewest usable items (rated by the human, the judge and another human) for a human to
        be tested; default 30. Humans below it are left out and named in ``warnings``.
    """
    if len(humans) < 2:
        raise UserError("the alternative annotator test needs at least two human raters")
    if min_items < 2:
        raise UserError(f"min_items must be at least 2, not {min_items}")
    numeric = table.numeric if alignment == "auto" else alignment == "neg_rmse"
    hidx = {h: table.raters.index(h) for h in humans}
    jcol = table.column(judge)
    rows, warns = [], []
    left_out: list[str] = []
    n_items = sum(
        1
        for i, row in enumerate(table.values)
        if jcol[i] is not None and sum(row[hidx[o]] is not None for o in humans) >= 2
    )
    for h in humans:
        wf, wh = [], []
        for i, row in enumerate(table.values):
            mine, pred = row[hidx[h]], jcol[i]
            others = [row[hidx[o]] for o in humans if o != h and row[hidx[o]] is not None]
            if mine is None or pred is None or not others:
                continue
            sf = _align(pred, others, numeric)  # type: ignore[arg-type]
            sh = _align(mine, others, numeric)  # type: ignore[arg-type]
            wf.append(float(sf >= sh))
            wh.append(float(sh >= sf))
        if len(wf) < min_items:
            left_out.append(h)
            warns.append(
                f"human {h!r}: only {len(wf)} usable items (fewer than {min_items}); left out of "
                "the test"
            )
            continue
        d = np.asarray(wh) - np.asarray(wf)
        t, p = _t_test(d, epsilon)
        rows.append((h, len(wf), float(np.mean(wf)), float(np.mean(wh)), t, p))
    if len(humans) < 3:
        warns.append("fewer than three humans: the authors advise at least three")
    if n_items < RECOMMENDED_ITEMS:
        warns.append(
            f"{n_items} instances rated by the judge and two or more humans; the authors ask "
            f"for {RECOMMENDED_ITEMS}–100"
        )
    if not rows:
        warns.append(
            f"no human has {min_items} usable items: the test was not run and the judge does "
            "not pass"
        )
    adj = fdr_adjust([r[5] for r in rows], fdr)
    result_rows = [
        AltTestHuman(
            human=h,
            n=n,
            rho_judge=rf,
            rho_human=rh,
            t=t,
            p_value=p,
            p_adjusted=a,
            judge_wins=a <= alpha,
        )
        for (h, n, rf, rh, t, p), a in zip(rows, adj, strict=True)
    ]
    omega = float(np.mean([r.judge_wins for r in result_rows])) if result_rows else None
    return AltTestResult(
        judge=judge,
        epsilon=epsilon,
        alpha=alpha,
        fdr=fdr,
        alignment="neg_rmse" if numeric else "accuracy",
        humans=result_rows,
        winning_rate=omega,
        advantage_probability=float(np.mean([r.rho_judge for r in result_rows]))
        if result_rows
        else None,
        passed=omega is not None and omega >= 0.5,
        warnings=warns,
        n_items=n_items,
        min_items=min_items,
        humans_left_out=left_out,
    )
