"""Corrected pass rates of a pass/fail judge (Rogan–Gladen), with PPI++ beside.

**Corrected pass rates.** A judge with known TPR and TNR that passes a share ``p`` of the items
implies a true pass rate ``θ = (p + TNR − 1) / (TPR + TNR − 1)`` (Rogan & Gladen 1978). Here
TPR and TNR come from the labelled items (all models pooled: the judge's error rates are assumed
not to depend on the model), ``p`` per model from the judge's verdict on all of that model's
items (labelled ones included). The interval resamples conversations of *both* samples: the
conversations with a label are one stratum, the others a second, each drawn with its own
multinomial weights (as in a stratified bootstrap), so a labelled conversation brings its
unlabelled items along and ``p`` varies with TPR and TNR as it does across samples.
``J = TPR + TNR − 1`` (Youden's index) is the denominator: at ``J ≤ 0`` the rate is not
identified (no estimate), a replicate with ``J* ≤ 0`` is undefined (dropped and counted; above
10% no interval), and below :data:`MIN_YOUDEN` the interval's coverage was not validated (a
named warning). The estimate and the interval ends are clipped to ``[0, 1]`` after the fact
and the clipping is reported (replicates are never clipped: that would pile them on a bound).

The default interval is the symmetric **bootstrap-t** (studentized) interval
``θ̂ ± q·SE``, ``q`` the ``level`` quantile of ``|t*| = |θ* − θ̂| / SE*``, with SE the delta-method
cluster-robust standard error of θ̂ computed again in every replicate from the same weighted
cluster sums (one product ``W @ [v vᵀ]``); it is what the seeded simulations in
``tests/calibration/test_binary_coverage.py`` (table in ``benchmarks/README.md``) found
covering 93–97% with 10–40 labelled conversations, where percentile intervals fell short.
PPI++ (:func:`~attune_judge.calibration.ppi_leaderboard`) on the same rows is reported beside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel
from attune_judge.calibration.agreement._binary import (
    BinaryAgreement,
    _binary_result,
    _ratio,
    binary_value,
)
from attune_judge.calibration.ppi._ppi_estimator import PPIEstimate
from attune_judge.calibration.ppi._ppi_plus import ppi_leaderboard
from attune_judge.calibration.resampling._bootstrap import (
    MAX_UNDEFINED_SHARE,
    MIN_CLUSTERS,
    Endpoints,
    FloatArray,
    bootstrap_weights,
    few_clusters_warning,
    interval_endpoints,
    studentized_endpoints,
)
from attune_judge.errors import UserError

__all__ = [
    "MIN_LABELLED",
    "MIN_YOUDEN",
    "CorrectedPassRates",
    "CorrectedRate",
    "CorrectionWarning",
    "corrected_pass_rates",
    "rogan_gladen",
]

MIN_YOUDEN = 0.4
"""Smallest ``J = TPR + TNR − 1`` at which the corrected rate's interval was validated (93–97%
coverage in the seeded simulations); below it every result carries the ``weak_judge`` warning."""

MIN_LABELLED = 50
"""Fewest labelled items at which the corrected rate's interval was validated."""


WarningCode = Literal["not_identified", "weak_judge", "few_labels", "few_clusters", "clipped"]


class CorrectionWarning(ResultModel):
    """A named caveat of a corrected pass rate."""

    code: WarningCode
    """``not_identified`` (J ≤ 0: no estimate, or J's interval reaches 0: no interval),
    ``weak_judge`` (J < :data:`MIN_YOUDEN`), ``few_labels`` (< :data:`MIN_LABELLED`),
    ``few_clusters`` (< 10 labelled conversations), ``clipped`` (an end outside [0, 1])."""
    message: str
    model: str | None = None
    """The model it concerns (``None``: all)."""


class CorrectedRate(ResultModel):
    """One model's pass rate: the judge's, corrected (Rogan–Gladen), PPI++, people's."""

    model: str
    corrected: Metric
    """Rogan–Gladen rate, clipped to [0, 1] (``raw_estimate`` keeps the unclipped value)."""
    raw_estimate: float | None
    """The Rogan–Gladen estimate before clipping."""
    clipped: list[str] = Field(default_factory=list)
    """Which of ``estimate``, ``lower``, ``upper`` were clipped to [0, 1]."""
    ppi: PPIEstimate | None
    """PPI++ mean of the model's 0/1 human labels, corrected with the judge's verdicts."""
    judge_rate: float
    """The judge's pass rate on all of the model's items (``p_obs``)."""
    human_rate: float | None
    """People's pass rate on the model's labelled items."""
    n_items: int
    """The model's items with a verdict of the judge."""
    n_labelled: int
    """Of those, items with a human label."""


class CorrectedPassRates(ResultModel):
    """Corrected pass rates per model and the judge's error rates they rest on."""

    rows: list[CorrectedRate]
    judge: BinaryAgreement
    """The judge on the labelled items (all models pooled): TPR and TNR used."""
    youden: Metric
    """``J = TPR + TNR − 1`` with its interval (same draw)."""
    level: float
    method: str
    """How the intervals were made."""
    B: int
    seed: int
    n_clusters: int
    n_labelled_clusters: int
    warnings: list[CorrectionWarning] = Field(default_factory=list)


def rogan_gladen(p_obs: float, tpr: float, tnr: float) -> float:
    """``(p_obs + TNR − 1) / (TPR + TNR − 1)``, unclipped; NaN when ``TPR + TNR ≤ 1``.

    >>> round(rogan_gladen(0.6, 0.9, 0.8), 10)
    0.5714285714
    """
    j = tpr + tnr - 1
    return (p_obs + tnr - 1) / j if j > 0 else float("nan")


def _strata_weights(labelled: np.ndarray, B: int, seed: int) -> FloatArray:
    """``(B × C)`` weights: the labelled clusters and the others drawn separately."""
    W = np.zeros((B, len(labelled)))
    rng = np.random.SeedSequence(seed)
    for mask, child in zip((labelled, ~labelled), rng.spawn(2), strict=True):
        k = int(mask.sum())
        if k:
            W[:, mask] = bootstrap_weights(k, B, int(child.generate_state(1)[0]))
    return W


class _Design:
    """Per-cluster sums of the rows: each model's judge passes and counts, the labelled
    confusion counts; and the linear pieces of the delta-method variance of θ."""

    def __init__(self, models: list[str], cl: np.ndarray, f: np.ndarray, y: np.ndarray, C: int):
        lab = ~np.isnan(y)
        self.models = models
        marr = np.asarray(models)
        cols = []
        for m in sorted(set(models)):
            sel = marr == m
            cols.append(np.bincount(cl[sel], weights=f[sel], minlength=C))
            cols.append(np.bincount(cl[sel], minlength=C).astype(float))
        yl, fl, cll = y[lab], f[lab], cl[lab]
        for jv, hv in ((1, 1), (1, 0), (0, 1), (0, 0)):
            sel = (fl == jv) & (yl == hv)
            cols.append(np.bincount(cll[sel], minlength=C).astype(float))
        self.names = sorted(set(models))
        self.V: FloatArray = np.asarray(np.column_stack(cols), dtype=np.float64)  # C × (2M+4)
        self.labelled = np.bincount(cl[lab], minlength=C) > 0

    def estimates(self, T: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """From weighted sums ``T`` (k × (2M+4)): p (k × M), TPR, TNR, θ (k × M)."""
        M = len(self.names)
        p = _ratio(T[:, 0 : 2 * M : 2], T[:, 1 : 2 * M : 2])
        tp, fp, fn, tn = (T[:, 2 * M + i] for i in range(4))
        tpr, tnr = _ratio(tp, tp + fn), _ratio(tn, tn + fp)
        j = tpr + tnr - 1
        theta = _ratio(p + (tnr - 1)[:, None], np.broadcast_to(j[:, None], p.shape).copy())
        return p, tpr, tnr, theta

    def gradients(self, T: FloatArray, mi: int) -> FloatArray:
        """Per replicate, the vector ``L`` (k × (2M+4)) with ``u_c = L · v_c`` the delta-method
        influence of θ_m in cluster c (before the weights)."""
        M = len(self.names)
        p, tpr, tnr, theta = self.estimates(T)
        tp, fp, fn, tn = (T[:, 2 * M + i] for i in range(4))
        j = tpr + tnr - 1
        th = theta[:, mi]
        with np.errstate(invalid="ignore", divide="ignore"):
            d_p, d_tpr, d_tnr = 1 / j, -th / j, (1 - th) / j
            L = np.zeros_like(T)
            n_m = T[:, 2 * mi + 1]
            L[:, 2 * mi] = d_p / n_m  # p = S / n: influence (S_c − p n_c) / n
            L[:, 2 * mi + 1] = -d_p * p[:, mi] / n_m
            pos, neg = tp + fn, tn + fp  # TPR = tp/pos, TNR = tn/neg
            L[:, 2 * M + 0] += d_tpr * (1 - tpr) / pos
            L[:, 2 * M + 2] += -d_tpr * tpr / pos
            L[:, 2 * M + 3] += d_tnr * (1 - tnr) / neg
            L[:, 2 * M + 1] += -d_tnr * tnr / neg
        return L


def _variance(L: FloatArray, Q: FloatArray, C_eff: float) -> FloatArray:
    """``Σ_c w_c u_c² · C/(C−1)`` from ``L`` (k × D) and ``Q = W @ vec(v vᵀ)`` (k × D²)."""
    k, D = L.shape
    quad = np.einsum("ki,kij,kj->k", L, Q.reshape(k, D, D), L)
    return np.asarray(np.clip(quad, 0, None) * C_eff / max(C_eff - 1, 1), dtype=np.float64)


def _verdicts(
    judge: Sequence[object], human: Sequence[object | None]
) -> tuple[FloatArray, FloatArray]:
    """The judge's verdicts (0/1) and the people's (0/1, NaN unlabelled); UserError naming the
    row of a value that is neither."""
    fv = [binary_value(v) for v in judge]
    if any(v is None for v in fv):
        i = next(i for i, v in enumerate(fv) if v is None)
        raise UserError(
            f"row {i}: the judge's verdict {judge[i]!r} is not pass/fail; a corrected pass rate "
            "needs 0/1 (yes/no) verdicts"
        )
    yv: list[float] = []
    for i, v in enumerate(human):
        missing = v is None or (isinstance(v, float) and np.isnan(v))
        b = None if missing else binary_value(v)
        if not missing and b is None:
            raise UserError(f"row {i}: the human label {v!r} is not pass/fail (yes/no, 1/0)")
        yv.append(np.nan if b is None else float(b))
    y = np.asarray(yv, dtype=np.float64)
    if not np.any(~np.isnan(y)):
        raise UserError("a corrected pass rate needs some human-labelled items")
    return np.asarray(fv, dtype=np.float64), y


def corrected_pass_rates(
    models: Sequence[str],
    clusters: Sequence[object],
    judge: Sequence[object],
    human: Sequence[object | None],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "studentized",
    ppi: bool = True,
) -> CorrectedPassRates:
    """Rogan–Gladen corrected pass rate per model, with PPI++ beside it on the same rows.

    Parameters
    ----------
    models, clusters, judge, human
        One row per judged item: candidate model, conversation, the judge's pass/fail verdict,
        and the people's (``None`` where unlabelled). The rows of :func:`ppi_leaderboard`.
    B, level, seed
        Bootstrap replicates, confidence level, seed.
    method
        ``studentized`` (symmetric bootstrap-t, the default), ``percentile`` or ``bca``.
    ppi
        Also compute PPI++ on the same rows.

    Returns
    -------
    CorrectedPassRates
        With named warnings (:class:`CorrectionWarning`); a model's ``corrected`` estimate is
        ``None`` when J ≤ 0 (not identified).
    """
    if not len(models) == len(clusters) == len(judge) == len(human):
        raise UserError("models, clusters, judge and human columns must have the same length")
    if method not in ("studentized", "percentile", "bca"):
        raise UserError(f"method must be studentized, percentile or bca, not {method!r}")
    f, y = _verdicts(judge, human)
    keys = {c: k for k, c in enumerate(dict.fromkeys(str(c) for c in clusters))}
    cl = np.asarray([keys[str(c)] for c in clusters])
    C = len(keys)
    mlist = [str(m) for m in models]
    d = _Design(mlist, cl, f, y, C)
    lab = ~np.isnan(y)
    ones = np.ones((1, C))
    T0 = ones @ d.V
    p0, tpr0, tnr0, theta0 = d.estimates(T0)
    W = _strata_weights(d.labelled, B, seed)
    T = W @ d.V
    M = len(d.names)
    judge_bin = _binary_result(
        "labelled items", d.V[:, 2 * M :], W, B=B, level=level, seed=seed, method="bca"
    )
    reps = _Replicates(d, T0, W, T, method)
    j0 = float(tpr0[0] + tnr0[0] - 1)
    j_reps = reps.j
    youden = Metric(
        name="youden_j",
        estimate=j0 if np.isfinite(j0) else None,
        **interval_endpoints(
            j0 if np.isfinite(j0) else None, j_reps, level=level, method="percentile"
        ).metric_fields(),
        level=level,
        requested_method="percentile",
        B=B,
        seed=seed,
        n_clusters=int(d.labelled.sum()),
        n=int(lab.sum()),
    )
    warnings = _warnings(j0, youden, int(lab.sum()), int(d.labelled.sum()))
    board = None
    if ppi:
        board = ppi_leaderboard(mlist, list(clusters), f, y.tolist(), level=level)
    ppi_rows = {r.model: r for r in board.rows} if board else {}
    marr = np.asarray(mlist)
    rows = []
    for mi, m in enumerate(d.names):
        sel = marr == m
        n_items, n_lab = int(sel.sum()), int((sel & lab).sum())
        est = float(theta0[0, mi])
        clipped: list[str] = []
        if not j0 > 0:
            metric = Metric(
                name=f"corrected_pass_rate[{m}]",
                estimate=None,
                undefined_reason=f"not identified: TPR + TNR − 1 = {j0:.3f} ≤ 0",
                level=level,
                n=n_items,
                n_clusters=C,
            )
        else:
            ends = _rate_interval(method, d, mi, est, reps, level=level, B=B)
            metric, clipped = _clipped_metric(
                m, est, ends.metric_fields(), ends.note, level, B, seed
            )
            metric = metric.model_copy(
                update={"requested_method": method, "n": n_items, "n_clusters": C}
            )
        if clipped:
            warnings.append(
                CorrectionWarning(
                    code="clipped",
                    model=m,
                    message=f"{m}: {', '.join(clipped)} clipped to [0, 1] (unclipped estimate "
                    f"{est:.3f}): the raw value lies outside [0, 1]",
                )
            )
        pr = ppi_rows.get(m)
        rows.append(
            CorrectedRate(
                model=m,
                corrected=metric,
                raw_estimate=est if np.isfinite(est) else None,
                clipped=clipped,
                ppi=pr.ppi if pr else None,
                judge_rate=float(p0[0, mi]),
                human_rate=float(np.mean(y[sel & lab])) if n_lab else None,
                n_items=n_items,
                n_labelled=n_lab,
            )
        )
    names = {
        "studentized": "symmetric bootstrap-t (delta-method cluster-robust SE in every replicate)",
        "percentile": "percentile",
        "bca": "BCa",
    }
    return CorrectedPassRates(
        rows=rows,
        judge=judge_bin,
        youden=youden,
        level=level,
        method=(
            f"Rogan–Gladen with TPR/TNR pooled over the labelled items; {names[method]} interval "
            "over a stratified cluster bootstrap (labelled and unlabelled conversations drawn "
            "separately); PPI++ beside it (cluster-robust Wald)"
        ),
        B=B,
        seed=seed,
        n_clusters=C,
        n_labelled_clusters=int(d.labelled.sum()),
        warnings=warnings,
    )


class _Replicates:
    """What the intervals of every model's rate read: the replicate estimates, the jackknife
    (BCa) or the weighted second moments of the cluster sums (bootstrap-t)."""

    def __init__(self, d: _Design, T0: FloatArray, W: FloatArray, T: FloatArray, method: str):
        _, self.tpr, self.tnr, self.theta = d.estimates(T)
        self.j = self.tpr + self.tnr - 1
        self.T0, self.T = T0, T
        self.jack = d.estimates(d.V.sum(0)[None, :] - d.V)[3] if method == "bca" else None
        self.Q0 = self.Q = None
        if method == "studentized":
            C = len(d.V)
            outer = np.einsum("ci,cj->cij", d.V, d.V).reshape(C, -1)
            self.Q0, self.Q = outer.sum(0)[None, :], W @ outer


def _rate_interval(
    method: str, d: _Design, mi: int, est: float, r: _Replicates, *, level: float, B: int
) -> Endpoints:
    """Endpoints of model ``mi``'s corrected rate (unclipped)."""
    bad = ~(r.j > 0)
    if method != "studentized":
        refuse = int(bad.sum()) > MAX_UNDEFINED_SHARE * B
        return interval_endpoints(
            est,
            r.theta[:, mi],
            level=level,
            method="percentile" if refuse else method,  # type: ignore[arg-type]
            jackknife=None if r.jack is None else r.jack[:, mi],
        )
    assert r.Q is not None and r.Q0 is not None
    C = len(d.V)
    se0 = float(np.sqrt(_variance(d.gradients(r.T0, mi), r.Q0, C))[0])
    se = np.sqrt(_variance(d.gradients(r.T, mi), r.Q, C))
    with np.errstate(invalid="ignore", divide="ignore"):
        tstar = (r.theta[:, mi] - est) / se
    tstar[bad] = np.inf  # a replicate whose J* ≤ 0 identifies no rate: as far off as can be
    ends = studentized_endpoints(est, se0, tstar, level=level)
    if ends.lower is None and np.isfinite(se0):
        ends = _unbounded(ends, int(bad.sum()), B, level)
    return ends


UNBOUNDED = "the data do not bound the rate"
"""Start of the note of a corrected rate whose interval is all of [0, 1]."""


def _unbounded(ends: Endpoints, n_bad: int, B: int, level: float) -> Endpoints:
    """All of [0, 1]: more than ``1 − level`` of the replicates had ``J* ≤ 0`` (or an infinite
    ``t*``), so no finite multiple of the standard error reaches the ``level`` quantile."""
    note = (
        f"{UNBOUNDED}: in {n_bad} of {B} replicates TPR + TNR − 1 ≤ 0 (more than "
        f"{1 - level:.0%}), so the interval is all of [0, 1]"
    )
    return Endpoints(-np.inf, np.inf, "studentized", None, None, ends.n_undefined, note)


def _clipped_metric(
    m: str, est: float, fields: dict[str, Any], note: str | None, level: float, B: int, seed: int
) -> tuple[Metric, list[str]]:
    """The corrected rate's metric with estimate and ends clipped to [0, 1], and which were."""
    clipped = []

    def clip(key: str, v: float | None) -> float | None:
        if v is None:
            return None
        if v < 0 or v > 1:
            clipped.append(key)
        return float(min(1.0, max(0.0, v)))

    fields = {
        **fields,
        "lower": clip("lower", fields["lower"]),
        "upper": clip("upper", fields["upper"]),
    }
    metric = Metric(
        name=f"corrected_pass_rate[{m}]",
        estimate=clip("estimate", est),
        **fields,
        level=level,
        B=B,
        seed=seed,
        note=note,
    )
    return metric, sorted(clipped, key=["estimate", "lower", "upper"].index)


def _warnings(j0: float, youden: Metric, n_lab: int, n_lab_cl: int) -> list[CorrectionWarning]:
    out = []
    if not j0 > 0:
        out.append(
            CorrectionWarning(
                code="not_identified",
                message=f"TPR + TNR − 1 = {j0:.3f} ≤ 0 on the labelled items: the judge is no "
                "better than chance there, so its verdicts say nothing about the true pass rate; "
                "no corrected rate is given",
            )
        )
        return out
    if youden.lower is not None and youden.lower <= 0:
        out.append(
            CorrectionWarning(
                code="not_identified",
                message=f"TPR + TNR − 1 = {j0:.3f}, but its interval reaches "
                f"{youden.lower:.3f} ≤ 0: the rate may not be identified and its interval may "
                "be withheld or unbounded",
            )
        )
    if j0 < MIN_YOUDEN:
        out.append(
            CorrectionWarning(
                code="weak_judge",
                message=f"TPR + TNR − 1 = {j0:.3f} < {MIN_YOUDEN}: the corrected rate divides by "
                "it, so it is unstable, and its interval's coverage was not validated there",
            )
        )
    if n_lab < MIN_LABELLED:
        out.append(
            CorrectionWarning(
                code="few_labels",
                message=f"{n_lab} labelled items (< {MIN_LABELLED}): the interval's coverage was "
                "validated from 50 up",
            )
        )
    few = few_clusters_warning(n_lab_cl, "human-labelled conversations")
    if n_lab_cl < MIN_CLUSTERS and few:
        out.append(CorrectionWarning(code="few_clusters", message=few))
    return out
