"""Bradley–Terry strengths from pairwise outcomes, bootstrapped by re-weighting clusters.

Win counts ``W_ij`` (i beat j; a tie is half a win for each side) are summed per cluster once.
A bootstrap replicate re-weights clusters, ``W*_ij = Σ_c w_c W_c,ij``, and all replicates are
refitted at once by the batched Newton method of ``_bt_fit`` (started from the point estimate).
By default the fit is the unpenalised maximum-likelihood estimate (``l2 = 0``), identified by
``Σ β = 0``; data without one (some group of models never lost to the rest, or groups never
compared) are refused with a message naming the models, or fitted with a ridge penalty when
``l2 > 0`` is asked for (a bias of order ``l2`` in β). Bootstrap replicates without an MLE and
replicates whose Newton fit does not converge are dropped and counted, never kept.

Intervals and rank sets are studentized, as for the mean leaderboard: each replicate gets its
own cluster-robust (sandwich) covariance (``bt_sandwich_covariance``); a strength's interval is
``β̂ ± q·SE`` with q the quantile of ``|β* − β̂| / SE*``, and the rank-set critical values are
the bootstrap quantiles of the max-t statistic over pairs (``StudentizedDraws``). Critical
values from ``N(0, Σ̂)`` with Σ̂ treated as known gave 85% joint coverage with 8 tied models at
15 conversations; ``tests/calibration/test_coverage.py`` checks the studentized ones. Below
``MIN_CLUSTERS`` conversations no rank claim is made.

A model compared in fewer than ``MIN_CLUSTERS`` conversations makes no rank claim, and must
not take the others' with it: the strengths are centred on the models compared in at least
that many (all, when fewer than two are), a replicate is usable when those have a fit (a thin
model absent from it is undefined there alone), and a replicate in which a thin model never
lost (never won) is refitted without its comparisons — its strength is ±∞ there and the
others' likelihood is that of the remaining comparisons — instead of being dropped for all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, PrivateAttr

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, Metric, ResultModel, kept
from attune_judge.calibration.ranking._bt_fit import (
    bt_identifiable,
    bt_sandwich_covariance,
    fit_bradley_terry_batch,
)
from attune_judge.calibration.ranking._ranksets import (
    RankProbabilities,
    RankSets,
    StudentizedDraws,
    claim_rank_probabilities,
    claim_rank_sets,
    no_rank_claims,
)
from attune_judge.calibration.resampling._bootstrap import (
    MAX_UNDEFINED_SHARE,
    MIN_CLUSTERS,
    FloatArray,
    bootstrap_weights,
    few_clusters_warning,
    interval_endpoints,
    no_claim_reason,
    studentized_endpoints,
)
from attune_judge.errors import UserError

__all__ = [
    "BradleyTerryResult",
    "bradley_terry",
    "bt_identifiable",
    "bt_sandwich_covariance",
    "fit_bradley_terry_batch",
    "win_tables",
]

ELO_SCALE = 400 / np.log(10)


def win_tables(
    model_a: Sequence[str],
    model_b: Sequence[str],
    winners: Sequence[str | None],
    clusters: Sequence[object],
) -> tuple[list[str], list[str], FloatArray]:
    """Per-cluster win counts.

    Returns
    -------
    (models, clusters, tables)
        Sorted model and cluster names, and ``tables`` of shape (C, p, p) where
        ``tables[c, i, j]`` is the number of wins of i over j in cluster c (ties = ½ each).
        Outcomes with winner ``None`` are skipped.
    """
    if not (len(model_a) == len(model_b) == len(winners) == len(clusters)):
        raise ValueError("model_a, model_b, winners and clusters must have the same length")
    keep = [i for i, w in enumerate(winners) if w is not None]
    bad = sorted({str(winners[i]) for i in keep} - {"A", "B", "tie"})
    if bad:
        raise UserError(f"winner must be A, B or tie; got {bad[:5]}")
    models = sorted({str(model_a[i]) for i in keep} | {str(model_b[i]) for i in keep})
    cl_names = sorted({str(clusters[i]) for i in keep})
    mi = {m: k for k, m in enumerate(models)}
    ci = {c: k for k, c in enumerate(cl_names)}
    T = np.zeros((len(cl_names), len(models), len(models)))
    for i in keep:
        a, b, c = mi[str(model_a[i])], mi[str(model_b[i])], ci[str(clusters[i])]
        if a == b:
            continue
        w = winners[i]
        if w == "A":
            T[c, a, b] += 1
        elif w == "B":
            T[c, b, a] += 1
        else:
            T[c, a, b] += 0.5
            T[c, b, a] += 0.5
    return models, cl_names, T


def _separation_message(total: FloatArray, models: list[str]) -> str:
    """Why the MLE does not exist, naming models that never lost or never won."""
    p = len(models)
    won = (total > 0).sum(1)
    lost = (total > 0).sum(0)
    present = (total.sum(0) + total.sum(1)) > 0
    never_lost = [models[i] for i in range(p) if present[i] and lost[i] == 0]
    never_won = [models[i] for i in range(p) if present[i] and won[i] == 0]
    detail = []
    if never_lost:
        detail.append(f"never lost or tied: {never_lost[:5]}")
    if never_won:
        detail.append(f"never won or tied: {never_won[:5]}")
    return (
        "Bradley–Terry: the maximum-likelihood strengths do not exist on these data — some "
        "group of models never lost to the others (or two groups were never compared)"
        + (f" ({'; '.join(detail)})" if detail else "")
        + "; compare more pairs, or pass l2 > 0 for a penalised (shrunk) fit"
    )


class BradleyTerryResult(ResultModel):
    """Bradley–Terry strengths with paired cluster-bootstrap intervals and rank sets."""

    labels: list[str]
    """Models."""
    strengths: list[Metric]
    """Log-strength β per model (logit scale, centred to mean 0 over the models compared in
    at least ``MIN_CLUSTERS`` conversations, or over all when fewer than two are), with
    interval."""
    elo: list[float | None]
    """Elo-like rating ``1000 + 400/ln(10) · β`` (display only)."""
    n_comparisons: float
    """Number of comparisons used (ties count once)."""
    n_clusters: int = 0
    """Number of clusters (conversations) resampled."""
    ties: str
    """How ties were counted (``half``: half a win for each side)."""
    l2: float
    """Ridge penalty of the fit (0: the unbiased maximum-likelihood estimate)."""
    covariance: list[list[float]] = Field(default_factory=list)
    """Cluster-robust (sandwich) covariance of β (order of ``labels``); rank sets use it."""
    rank_sets_simultaneous: RankSets
    """Simultaneous rank sets (Mogstad et al. 2024, step-down), critical values from the
    bootstrap of the max-t statistic; every set ``[1, p]`` when ``rank_claims`` is false."""
    rank_sets_marginal: RankSets
    """Marginal confidence sets for ranks."""
    rank_probabilities: RankProbabilities
    """P(rank = 1), P(rank ≤ k)."""
    rank_claims: bool = True
    """Whether rank sets are reported; ``False`` below ``MIN_CLUSTERS`` clusters."""
    n_unconverged: int
    """Replicates whose Newton fit did not converge (dropped and counted)."""
    n_separated: int = 0
    """Replicates without an MLE (a group of models never lost to the rest, or groups never
    compared; only with ``l2 = 0``): dropped from intervals, covariance and rank sets."""
    n_used: int = 0
    """Replicates used: ``B − n_separated − n_unconverged``."""
    note: str | None = None
    """Caveats (dropped replicates, a penalised fit)."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats that limit what may be claimed (too few conversations)."""
    no_rank_claim: dict[str, str] = Field(default_factory=dict)
    """Models that make no rank claim, and why (no valid interval of their strength: compared
    in fewer than ``MIN_CLUSTERS`` conversations, none, or zero width; see
    :func:`~attune_judge.calibration.no_claim_reason`): rank sets ``[1, p]``, no P(rank 1)."""

    _replicates: FloatArray | None = PrivateAttr(default=None)

    @property
    def replicates(self) -> FloatArray:
        """Bootstrap replicates of β, shape (B, p)."""
        return kept(self._replicates, "replicates were not kept")


def bradley_terry(
    model_a: Sequence[str],
    model_b: Sequence[str],
    winners: Sequence[str | None],
    clusters: Sequence[object],
    *,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    scheme: str = "multinomial",
    method: IntervalMethod = "studentized",
    l2: float = 0.0,
) -> BradleyTerryResult:
    """Fit Bradley–Terry and bootstrap it by re-weighting clusters (all replicates at once).

    Parameters
    ----------
    model_a, model_b, winners, clusters
        One entry per comparison: the two models, the winner (``A``, ``B``, ``tie``, ``None``
        = skip) and the cluster (conversation) it belongs to.
    B, level, seed, scheme
        Replicates, confidence level, seed, weight scheme.
    method
        Interval of each strength: ``studentized`` (default; symmetric bootstrap-t with the
        sandwich SE, as for leaderboard means), ``bca`` or ``percentile``. Rank sets are
        studentized whatever ``method`` is.
    l2
        Ridge penalty; 0 (default) is the unbiased MLE, which needs every model to have won
        (or tied) and lost against the others in a connected way (see the module notes):
        otherwise a ``UserError`` names the models; ``l2 > 0`` then gives a penalised fit.

    Notes
    -----
    Replicates without an MLE (``l2 = 0``) and replicates that do not converge are dropped
    from intervals, the covariance and the rank sets, and counted (``n_separated``,
    ``n_unconverged``); when more than 10% are dropped the result's ``note`` says so. The
    sandwich covariance of each replicate costs O(C·p²); for many models only the first
    ``max(1000, 4·10⁷ / p²)`` usable replicates feed the max-t critical values.
    """
    models, _clusters, T = win_tables(model_a, model_b, winners, clusters)
    if len(models) < 2:
        raise UserError("Bradley–Terry needs comparisons between at least two models")
    if l2 < 0:
        raise UserError(f"l2 must be >= 0, not {l2}")
    C, p = T.shape[0], len(models)
    if C < 2:
        raise UserError("Bradley–Terry needs comparisons from at least two clusters")
    flat = T.reshape(C, p * p)
    total = T.sum(0)
    if l2 == 0 and not bt_identifiable(total[None])[0]:
        raise UserError(_separation_message(total, models))
    n_conv = ((T.sum(2) + T.sum(1)) > 0).sum(0)  # conversations each model is compared in
    thin = n_conv < MIN_CLUSTERS
    if thin.all() or (~thin).sum() < 2:  # no claim for anyone: centre on every model
        thin = np.zeros(p, dtype=bool)
    fit, conv0 = fit_bradley_terry_batch(total[None], l2=l2)
    if not conv0[0]:
        raise UserError("the Bradley–Terry fit did not converge on the full data")
    beta_hat = _centred(fit, thin)[0]
    gauge = _centring(thin)
    cov_hat = _recentred_cov(
        bt_sandwich_covariance(T, np.ones((1, C)), beta_hat[None], l2=l2), gauge
    )[0]
    se_hat = np.sqrt(np.clip(np.diag(cov_hat), 0, None))
    Wt = bootstrap_weights(C, B, seed, scheme)
    # the point estimate is the natural start for every replicate (and jackknife fit)
    rep_wins = (Wt @ flat).reshape(B, p, p)
    reps, conv, separated, n_infinite = _fit_replicates(rep_wins, thin, l2, beta_hat)
    unconverged = ~conv & ~separated
    # a replicate is usable when every well-compared model has a strength (a thin model
    # absent from it, or fitted out of it, is undefined there alone)
    ok = np.all(np.isfinite(reps[:, ~thin]), axis=1)
    reps[~ok] = np.nan
    if ok.sum() < 2:
        raise UserError(
            f"Bradley–Terry: only {int(ok.sum())} of {B} bootstrap replicates have a fit "
            f"({int(separated.sum())} without an MLE, {int(unconverged.sum())} unconverged); "
            "too few comparisons per conversation — collect more, or set l2 > 0"
        )
    # each usable replicate's own sandwich covariance (capped in number for many models)
    used = np.flatnonzero(ok)[: max(1_000, int(4e7 // (p * p)))]
    pair_t, se_star = _studentized_statistics(T, Wt[used], reps[used], beta_hat, l2, gauge)
    tstar = np.full((B, p), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = reps[used] - beta_hat[None, :]
        tstar[used] = np.where(dev == 0, 0.0, dev / se_star)
    jack = None
    if method == "bca" and C >= 3:
        jack_wins = ((1 - np.eye(C)) @ flat).reshape(C, p, p)
        jack = _fit_replicates(jack_wins, thin, l2, beta_hat)[0]
    strengths = []
    for m, name in enumerate(models):
        est = float(beta_hat[m]) if np.isfinite(beta_hat[m]) else None
        if method == "studentized":
            e = studentized_endpoints(est, float(se_hat[m]), tstar[:, m], level=level)
        else:
            e = interval_endpoints(
                est,
                reps[:, m],
                level=level,
                method=method,
                jackknife=None if jack is None else jack[:, m],
            )
        strengths.append(
            Metric(
                name=f"bt_strength[{name}]",
                estimate=est,
                **e.metric_fields(),
                level=level,
                requested_method=method,
                B=B,
                seed=seed,
                scheme="poisson" if scheme == "poisson" else "multinomial",
                n_clusters=int(np.sum((T[:, m, :].sum(1) + T[:, :, m].sum(1)) > 0)),
                n=round(float(T[:, m, :].sum() + T[:, :, m].sum())),
                note=e.note,
            )
        )
    claims = C >= MIN_CLUSTERS
    blocked = {
        m: why for m, st in zip(models, strengths, strict=True) if (why := no_claim_reason(st))
    }
    ranked = [m not in blocked for m in models]
    if claims:

        def draws(idx: NDArray[np.intp], t: NDArray[np.float32] = pair_t) -> StudentizedDraws:
            return StudentizedDraws.from_statistics(t[:, idx][:, :, idx])

        sim, mar = claim_rank_sets(beta_hat, cov_hat, models, ranked, draws, level=level, seed=seed)
    else:
        sim, mar = no_rank_claims(models, level, seed)
    del pair_t
    notes = _notes(models, thin, n_infinite, B, ok, separated, unconverged, l2)
    out = BradleyTerryResult(
        labels=models,
        strengths=strengths,
        elo=[None if not np.isfinite(b) else float(1000 + ELO_SCALE * b) for b in beta_hat],
        n_comparisons=float(T.sum()),
        n_clusters=C,
        ties="half",
        l2=l2,
        covariance=cov_hat.tolist(),
        rank_sets_simultaneous=sim,
        rank_sets_marginal=mar,
        rank_probabilities=claim_rank_probabilities(reps, models, ranked, level),
        rank_claims=claims,
        n_unconverged=int(unconverged.sum()),
        n_separated=int(separated.sum()),
        n_used=int(ok.sum()),
        note="; ".join(notes) or None,
        warnings=[w for w in [few_clusters_warning(C)] if w]
        + (
            [
                f"{m}: no rank claim ({why}); comparable to every model (rank set: every "
                "rank; no P(rank 1))"
                for m, why in blocked.items()
            ]
            if claims
            else []
        ),
        no_rank_claim=blocked,
    )
    out._replicates = reps
    return out


def _notes(
    models: list[str],
    thin: NDArray[np.bool_],
    n_infinite: int,
    B: int,
    ok: NDArray[np.bool_],
    separated: NDArray[np.bool_],
    unconverged: NDArray[np.bool_],
    l2: float,
) -> list[str]:
    """The result's caveats: the centring, dropped replicates, a penalised fit."""
    dropped = B - int(ok.sum())
    missing = int((~ok & ~separated & ~unconverged).sum())
    notes = []
    if thin.any():
        notes.append(
            f"strengths centred on the models compared in at least {MIN_CLUSTERS} "
            f"conversations ({', '.join(m for m, t in zip(models, thin, strict=True) if not t)}); "
            "the others' resamples leave those strengths alone"
            + (
                f" ({n_infinite} replicates refitted without a model compared in fewer "
                "conversations that never lost or never won there: its strength is infinite "
                "and its comparisons carry no information about the others)"
                if n_infinite
                else ""
            )
        )
    if dropped:
        notes.append(
            f"{dropped} of {B} replicates dropped ({int(separated.sum())} without an MLE, "
            f"{int(unconverged.sum())} unconverged"
            + (f", {missing} without a comparison of some model" if missing else "")
            + ")"
            + (
                "; more than 10% dropped: the intervals describe only the replicates with a "
                "fit and are too narrow"
                if dropped > MAX_UNDEFINED_SHARE * B
                else ""
            )
        )
    if l2 > 0:
        notes.append(f"penalised fit (l2={l2}): strengths are shrunk towards each other")
    return notes


def _centring(thin: NDArray[np.bool_]) -> FloatArray:
    """The weights of the strengths' mean that is set to 0: uniform over the models that are
    not ``thin`` (compared in at least ``MIN_CLUSTERS`` conversations). A thin model's
    strength, shaky or absent in a resample, then moves no other model's."""
    keep = ~np.asarray(thin, dtype=bool)
    return np.asarray(keep / keep.sum(), dtype=np.float64)


def _centred(beta: FloatArray, thin: NDArray[np.bool_]) -> FloatArray:
    """Strengths (K, p) shifted so that their mean over the non-thin models is 0; a row with
    a non-thin model undefined is undefined throughout."""
    b = np.asarray(beta, dtype=np.float64)
    return np.asarray(b - b[:, ~thin].mean(axis=1, keepdims=True), dtype=np.float64)


def _recentred_cov(cov: FloatArray, gauge: FloatArray) -> FloatArray:
    """Covariances (K, p, p) of strengths moved to the centring ``gauge``: ``L Σ Lᵀ`` with
    ``L = I − 1 gaugeᵀ`` (any centring differs from another by a shift common to all). A
    model left out of a row (NaN; never one the gauge weighs) stays NaN there alone."""
    p = cov.shape[-1]
    L = np.eye(p) - np.outer(np.ones(p), gauge)
    out = np.einsum("ij,kjl,ml->kim", L, np.nan_to_num(cov), L)
    gone = np.isnan(np.diagonal(cov, axis1=1, axis2=2))
    out[gone[:, :, None] | gone[:, None, :]] = np.nan
    return np.asarray(out, dtype=np.float64)


def _fit_replicates(
    wins: FloatArray, thin: NDArray[np.bool_], l2: float, start: FloatArray
) -> tuple[FloatArray, NDArray[np.bool_], NDArray[np.bool_], int]:
    """Fit resampled win matrices (K, p, p); strengths centred by :func:`_centred`.

    A matrix without an MLE because a thin model never lost (or never won) in it is refitted
    without that model's comparisons (repeatedly, as long as that applies): its strength is
    then +∞ (−∞), the likelihood of the others' is that of the remaining comparisons, and the
    thin model alone is undefined in the replicate. Returns the strengths (NaN where
    undefined), whether each fit converged, which matrices have no MLE even so, and how many
    were refitted.
    """
    W = np.array(wins, dtype=np.float64)
    K = len(W)
    separated = ~bt_identifiable(W) if l2 == 0 else np.zeros(K, dtype=bool)
    n_refit = 0
    if separated.any() and thin.any():
        idx = np.flatnonzero(separated)
        sub = W[idx]
        for _ in range(int(thin.sum())):
            won, lost = sub.sum(2), sub.sum(1)
            drop = thin[None, :] & (won + lost > 0) & ((won == 0) | (lost == 0))
            if not drop.any():
                break
            sub[drop] = 0.0
            sub.transpose(0, 2, 1)[drop] = 0.0
        fixed = bt_identifiable(sub) & (sub.sum((1, 2)) < W[idx].sum((1, 2)))
        W[idx[fixed]] = sub[fixed]
        separated[idx[fixed]] = False
        n_refit = int(fixed.sum())
    reps, conv = fit_bradley_terry_batch(W, l2=l2, start=start)
    reps[~conv] = np.nan
    return _centred(reps, thin), conv, separated, n_refit


def _studentized_statistics(
    T: FloatArray,
    weights: FloatArray,
    reps: FloatArray,
    beta_hat: FloatArray,
    l2: float,
    gauge: FloatArray,
    chunk_cells: int = 2_000_000,
) -> tuple[NDArray[np.float32], FloatArray]:
    """Per replicate: the studentized pair differences and the strengths' standard errors.

    ``t*_bjk = ((β*_j − β*_k) − (β̂_j − β̂_k)) / σ*_jk`` with σ*_jk from replicate b's own
    sandwich covariance (``bt_sandwich_covariance``), as float32 of shape (n, p, p) (the
    rank-set critical values; the test statistic uses σ̂_jk from the same estimator on the
    full data), and ``SE*_bm = √Σ*_b,mm`` (n, p). Computed in blocks of replicates so that
    only the float32 result is held whole.
    """
    n, p = reps.shape
    C = len(T)
    out = np.empty((n, p, p), dtype=np.float32)
    se = np.empty((n, p))
    step = max(1, chunk_cells // max(1, p * p + C * p))
    for a in range(0, n, step):
        cov = _recentred_cov(
            bt_sandwich_covariance(T, weights[a : a + step], reps[a : a + step], l2=l2), gauge
        )
        d = np.clip(np.diagonal(cov, axis1=1, axis2=2), 0, None)
        r = reps[a : a + step]
        diff = (r[:, :, None] - r[:, None, :]) - (beta_hat[:, None] - beta_hat[None, :])
        with np.errstate(invalid="ignore", divide="ignore"):
            t = diff / np.sqrt(np.clip(d[:, :, None] + d[:, None, :] - 2 * cov, 0, None))
        t[diff == 0] = 0.0  # no deviation, whatever the spread
        out[a : a + step] = t
        se[a : a + step] = np.sqrt(d)
    return out, se
