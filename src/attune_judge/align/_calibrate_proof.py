"""The held-out proof of a calibrated judge: on the test conversations, per criterion and for the
overall (the mean over criteria), RMSE, Spearman ρ and quadratic-weighted κ against the people's
mean, for the uncalibrated expected score, the calibrated head (with and without the reply
features), the length and lexicon baselines and the human ceiling; paired cluster-bootstrap
intervals of the differences; Brier score and ECE of the predicted distributions against each
person's rating; and a plain verdict.

Under cluster weights ``w`` (a conversation drawn twice counts twice)::

    RMSE = sqrt(Σ w (p − h)² / Σ w)
    κ_qw = 1 − Σ w (p − h)² / Σ w / [var_w(p) + var_w(h) + (p̄ − h̄)²]

κ_qw on a criterion compares the values rounded to the scale's levels (Cohen's quadratic-weighted
κ); on the overall the unrounded means (Lin's concordance, its continuous form).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import (
    Metric,
    bootstrap_statistic,
    few_clusters_warning,
    probability_scores,
    weighted_spearman,
)
from attune_judge.runs._align import CalibrationProof, CriterionProof

__all__ = ["CalibrationProof", "CriterionProof", "calibration_proof", "weighted_kappa_qw"]

OVERALL = "overall"
METRICS = ("rmse", "spearman", "kappa_qw")
Stat = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _wmean(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    return (w * v).sum(axis=1) / w.sum(axis=1)


def weighted_rmse(p: np.ndarray, h: np.ndarray, w: np.ndarray) -> np.ndarray:
    """RMSE under each row of item weights ``w`` (k, n)."""
    return np.sqrt(_wmean((p - h) ** 2, w))


def weighted_kappa_qw(p: np.ndarray, h: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Quadratic-weighted κ (continuous form) under each row of item weights (NaN if undefined).

    >>> x = np.array([1.0, 2.0, 3.0])
    >>> round(float(weighted_kappa_qw(x, x, np.ones((1, 3)))[0]), 6)
    1.0
    """
    mp, mh = _wmean(p, w), _wmean(h, w)
    vp = _wmean((p - mp[:, None]) ** 2, w)
    vh = _wmean((h - mh[:, None]) ** 2, w)
    expected = vp + vh + (mp - mh) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1.0 - _wmean((p - h) ** 2, w) / expected, np.nan)


STATS: dict[str, Stat] = {
    "rmse": weighted_rmse,
    "spearman": weighted_spearman,
    "kappa_qw": weighted_kappa_qw,
}


def _levels_round(v: np.ndarray, levels: Sequence[int]) -> np.ndarray:
    lv = np.asarray(levels, float)
    return lv[np.argmin(np.abs(v[:, None] - lv[None, :]), axis=1)]


def _pair(f: Stat, x: np.ndarray, y: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    return lambda w: f(x, y, w)


def _diff(
    f: Stat, xa: np.ndarray, ya: np.ndarray, xb: np.ndarray, yb: np.ndarray
) -> Callable[[np.ndarray], np.ndarray]:
    return lambda w: f(xa, ya, w) - f(xb, yb, w)


def _boot(
    stat: Callable[[np.ndarray], np.ndarray],
    codes: np.ndarray,
    name: str,
    n: int,
    B: int,
    seed: int,
) -> Metric:
    C = int(codes.max()) + 1

    def f(wc: np.ndarray) -> np.ndarray:
        return stat(wc[:, codes])

    return bootstrap_statistic(f, C, name=name, B=B, seed=seed, n=n, method="percentile")


def _criterion(
    values: Mapping[str, np.ndarray],
    human: np.ndarray,
    clusters: Sequence[str],
    levels: Sequence[int] | None,
    pairs: Sequence[tuple[str, str]],
    B: int,
    seed: int,
) -> CriterionProof:
    names = sorted(set(clusters))
    codes = np.array([names.index(c) for c in clusters])
    h = human if levels is None else _levels_round(human, levels)
    out = CriterionProof(n_items=len(human), n_clusters=len(names))

    def prep(metric: str, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if metric == "kappa_qw" and levels is not None:
            return _levels_round(v, levels), h
        return v, human

    for system, v in values.items():
        out.systems[system] = {}
        for m in METRICS:
            x, y = prep(m, v)
            out.systems[system][m] = _boot(_pair(STATS[m], x, y), codes, m, len(v), B, seed)
    for a, b in pairs:
        key = f"{a} − {b}"
        out.differences[key] = {}
        for m in METRICS:
            xa, ya = prep(m, values[a])
            xb, yb = prep(m, values[b])
            out.differences[key][m] = _boot(
                _diff(STATS[m], xa, ya, xb, yb),
                codes,
                f"{m}_difference",
                len(xa),
                B,
                seed,
            )
    return out


def _ceiling(
    raters: Sequence[tuple[str, float, float]],
    levels: Sequence[int] | None,
    B: int,
    seed: int,
) -> dict[str, Metric]:
    """(cluster, person, mean of the others) rows → each metric."""
    if len(raters) < 3:
        return {}
    names = sorted({r[0] for r in raters})
    codes = np.array([names.index(r[0]) for r in raters])
    own = np.array([r[1] for r in raters])
    rest = np.array([r[2] for r in raters])
    out = {}
    for m in METRICS:
        x, y = (
            (_levels_round(rest, levels), _levels_round(own, levels))
            if m == "kappa_qw" and levels is not None
            else (rest, own)
        )
        out[m] = _boot(_pair(STATS[m], x, y), codes, m, len(own), B, seed)
    return out


def _overall_ceiling(
    raters: Sequence[Mapping[str, Mapping[str, float]]],
    rows: Sequence[int],
    clusters: Sequence[str],
    criteria: Sequence[str],
) -> list[tuple[str, float, float]]:
    """(cluster, person's mean over the criteria, mean of the others' means) for every person
    who rated all of ``criteria`` on an item with another such person."""
    ceil = []
    for k in rows:
        means = {
            r: float(np.mean([v[c] for c in criteria]))
            for r, v in raters[k].items()
            if all(c in v for c in criteria)
        }
        for r, own in means.items():
            others = [x for o, x in means.items() if o != r]
            if others:
                ceil.append((clusters[k], own, float(np.mean(others))))
    return ceil


def calibration_proof(
    *,
    clusters: Sequence[str],
    human: Mapping[str, Sequence[float | None]],
    raters: Sequence[Mapping[str, Mapping[str, float]]],
    systems: Mapping[str, Mapping[str, Sequence[float | None]]],
    distributions: Mapping[str, Mapping[str, Sequence[Mapping[str, float] | None]]],
    levels: Mapping[str, Sequence[int]],
    headline: str,
    n_failed: int,
    B: int = DEFAULT_B,
    seed: int = 0,
) -> CalibrationProof:
    """The proof on the test items (one entry per item in every sequence).

    Parameters
    ----------
    clusters
        Conversation of each item.
    human
        Criterion → the people's mean per item (``None``: not rated).
    raters
        Per item, rater → criterion → rating (the ceiling, Brier and ECE).
    systems
        System (``uncalibrated``, ``calibrated``, ``length``, ``lexicon`` …) → criterion →
        value per item (``None``: no value).
    distributions
        System → criterion → predicted distribution per item (Brier, ECE).
    levels
        Criterion → scale levels.
    headline
        The calibrated system the verdict is about.
    """
    criteria = list(human)
    calibrated = [s for s in systems if s.startswith("calibrated")]
    pairs = [(a, b) for a in calibrated for b in systems if b not in calibrated]
    if len(calibrated) == 2:
        pairs.append((calibrated[1], calibrated[0]))
    out: dict[str, CriterionProof] = {}
    usable = [
        k
        for k in range(len(clusters))
        if all(systems[s][c][k] is not None for s in systems for c in criteria)
    ]
    total_h = []
    for c in criteria:
        keep = [k for k in usable if human[c][k] is not None]
        if len(keep) < 3:
            continue
        vals = {s: np.array([float(systems[s][c][k]) for k in keep]) for s in systems}  # type: ignore[arg-type]
        out[c] = _criterion(
            vals,
            np.array([float(human[c][k]) for k in keep]),  # type: ignore[arg-type]
            [clusters[k] for k in keep],
            levels[c],
            pairs,
            B,
            seed,
        )
        ceil = []
        for k in keep:
            rs = {r: v[c] for r, v in raters[k].items() if c in v}
            for r, own in rs.items():
                others = [x for o, x in rs.items() if o != r]
                if others:
                    ceil.append((clusters[k], own, float(np.mean(others))))
        out[c].human_ceiling = _ceiling(ceil, levels[c], B, seed)
        for s, by_c in distributions.items():
            dists: list[Mapping[str, float] | None] = []
            labels: list[float | None] = []
            for k in keep:
                for given in raters[k].values():
                    if c in given:
                        dists.append(by_c[c][k])
                        labels.append(given[c])
            out[c].probability[s] = probability_scores(dists, labels, levels[c])
    rows = [k for k in usable if all(human[c][k] is not None for c in out)]
    rated = list(out)
    if out and len(rows) >= 3:
        vals = {
            s: np.array([np.mean([float(systems[s][c][k]) for c in out]) for k in rows])  # type: ignore[arg-type]
            for s in systems
        }
        total_h = [float(np.mean([float(human[c][k]) for c in out])) for k in rows]  # type: ignore[arg-type]
        out[OVERALL] = _criterion(
            vals, np.array(total_h), [clusters[k] for k in rows], None, pairs, B, seed
        )
        out[OVERALL].human_ceiling = _ceiling(
            _overall_ceiling(raters, rows, clusters, rated), None, B, seed
        )
    n_conv = len({clusters[k] for k in usable})
    return CalibrationProof(
        headline=headline,
        n_items=len(usable),
        n_clusters=n_conv,
        n_failed=n_failed,
        criteria=out,
        verdict=_verdict(out.get(OVERALL), headline, len(usable), n_conv),
    )


def _cell(m: Metric | None) -> str:
    if m is None or m.estimate is None:
        return "—"
    if m.lower is None or m.upper is None:
        return f"{m.estimate:+.2f}"
    return f"{m.estimate:+.2f} [{m.lower:+.2f}, {m.upper:+.2f}]"


def _verdict(overall: CriterionProof | None, headline: str, n: int, n_conv: int) -> str:
    if overall is None:
        return f"Too few held-out items ({n}) with every score to compare the calibrated judge."
    parts = []
    for other in ("uncalibrated", "length", "lexicon"):
        d = overall.differences.get(f"{headline} − {other}", {}).get("spearman")
        if d is None or d.estimate is None:
            continue
        lo, hi = d.lower, d.upper
        if lo is not None and lo > 0:
            word = "better than"
        elif hi is not None and hi < 0:
            word = "WORSE than"
        else:
            word = "not distinguishable from"
        parts.append(f"{word} the {other} judge (Δρ {_cell(d)})")
    text = (
        f"On {n} held-out items ({n_conv} conversations) the {headline} judge ranks the "
        f"people's overall rating {'; '.join(parts)}."
    )
    few = few_clusters_warning(n_conv, "held-out conversations")
    return text + (f" Caution: {few}." if few else "")
