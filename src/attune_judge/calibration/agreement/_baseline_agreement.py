"""A judge's agreement with people beside no-model baselines, with paired differences.

A weak judge can look useful until it is shown next to something that needs no model at all:
the reply's length, or a count of empathic words. :func:`baseline_agreement` computes, on the
same items, the Spearman correlation of the judge and of each baseline with the human score,
and the judge-minus-baseline difference. All intervals come from one cluster bootstrap: every
replicate reweights the clusters (conversations) once and evaluates every rater on that draw,
so a difference's interval keeps the pairing (the judge and the baseline see the same
resampled items).

Spearman under cluster weights is the weighted Pearson correlation of weighted mid-ranks (an
item drawn twice counts twice), which equals ``scipy.stats.spearmanr`` on the expanded sample.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import Metric, ResultModel
from attune_judge.calibration.agreement._pairwise import _midranks, _wpearson
from attune_judge.calibration.resampling._bootstrap import FloatArray, bootstrap_statistic

__all__ = ["BaselineAgreement", "baseline_agreement", "weighted_spearman"]


def weighted_spearman(x: FloatArray, y: FloatArray, weights: FloatArray) -> FloatArray:
    """Spearman ρ of ``x`` and ``y`` (n,) under each row of item weights (k, n) (NaN if undefined).

    >>> import numpy as np
    >>> float(weighted_spearman(np.array([1., 2., 3.]), np.array([1., 3., 2.]), np.ones((1, 3)))[0])
    0.5
    """
    return _wpearson(_midranks(x, weights), _midranks(y, weights), weights)


class BaselineAgreement(ResultModel):
    """The judge's and the baselines' Spearman ρ with the people, and the paired differences."""

    n: int
    """Items compared (those the judge scored; every rater is evaluated on exactly these)."""
    n_clusters: int
    """Resampling units (conversations)."""
    spearman: dict[str, Metric] = Field(default_factory=dict)
    """Rater (``judge`` and each baseline) -> ρ with the human score, with interval."""
    difference: dict[str, Metric] = Field(default_factory=dict)
    """Baseline -> ρ(judge) − ρ(baseline), paired cluster-bootstrap interval."""

    def lines(self, judge: str = "judge") -> list[str]:
        """Short terminal lines: each rater's ρ, then the judge's difference to each baseline."""

        def cell(m: Metric) -> str:
            if m.estimate is None:
                return f"undefined ({m.undefined_reason})"
            if m.lower is None or m.upper is None:
                return f"{m.estimate:+.2f}"
            return f"{m.estimate:+.2f} [{m.lower:+.2f}, {m.upper:+.2f}]"

        out = [f"Spearman ρ with the people on the same {self.n} items:"]
        for name, metric in self.spearman.items():
            out.append(f"  {judge if name == 'judge' else name + ' baseline':24s} {cell(metric)}")
        for name, metric in self.difference.items():
            out.append(f"  {judge} − {name:18s} {cell(metric)}")
        return out


def baseline_agreement(
    human: Sequence[float],
    judge: Sequence[float],
    baselines: Mapping[str, Sequence[float]],
    *,
    clusters: Sequence[str],
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> BaselineAgreement:
    """ρ of the judge and of each baseline with ``human``, and the paired differences.

    Parameters
    ----------
    human, judge
        One value per item (the same items, in the same order).
    baselines
        Name -> one value per item (``length``, ``lexicon``, ...).
    clusters
        The resampling unit of each item (conversation id).
    B, seed, level
        Bootstrap replicates, seed and confidence level (one weights draw for every metric).

    Raises
    ------
    ValueError
        Lengths differ, or fewer than three items.
    """
    h = np.asarray(human, dtype=np.float64)
    j = np.asarray(judge, dtype=np.float64)
    n = len(h)
    if len(j) != n or len(clusters) != n or any(len(v) != n for v in baselines.values()):
        raise ValueError("human, judge, clusters and every baseline need one value per item")
    if n < 3:
        raise ValueError("at least three items are needed")
    names = sorted(set(clusters))
    codes = np.array([names.index(c) for c in clusters])
    raters = {"judge": j, **{k: np.asarray(v, dtype=np.float64) for k, v in baselines.items()}}

    def rho(values: FloatArray):  # type: ignore[no-untyped-def]
        def stat(wc: FloatArray) -> FloatArray:
            return weighted_spearman(values, h, wc[:, codes])

        return stat

    def diff(values: FloatArray):  # type: ignore[no-untyped-def]
        def stat(wc: FloatArray) -> FloatArray:
            w = wc[:, codes]
            return weighted_spearman(j, h, w) - weighted_spearman(values, h, w)

        return stat

    common = {"B": B, "seed": seed, "level": level, "n": n, "method": "percentile"}
    result = BaselineAgreement(n=n, n_clusters=len(names))
    for name, values in raters.items():
        result.spearman[name] = bootstrap_statistic(
            rho(values),
            len(names),
            name="spearman",
            **common,  # type: ignore[arg-type]
        )
    for name in baselines:
        result.difference[name] = bootstrap_statistic(
            diff(raters[name]),
            len(names),
            name="spearman_difference",
            **common,  # type: ignore[arg-type]
        )
    return result
