"""Several judges on the same items: agreement among them, each against the panel, and
self-preference.

A *panel* is a jury's members (each member's judgment is kept in the jury's judgment) or the
judges of a run scored with several models and no jury. On the same items:

- **agreement among the judges**: Krippendorff's α (interval level on normalised scores,
  nominal on pairwise verdicts) with a cluster-bootstrap interval over conversations;
- **each judge against the consensus** (the jury's combined value, or the mean / majority of
  the panel): Spearman, Pearson and MAE (scores) or raw agreement and Cohen's κ (verdicts);
- **self-preference**: for a judge whose model family (``gpt``, ``claude``, ``gemini``,
  ``llama``, ...) also wrote candidates, the mean of ``own score − the other judges' mean
  score`` on its own family's candidates (``own_family``), the same on the other candidates
  (``other_families``, the judge's general leniency), and their difference (``bias``: what it
  gives its own family beyond its leniency). Intervals: paired cluster bootstrap over
  conversations (both means on the same draws; the difference from the replicate
  differences, percentile).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import Metric, ResultModel
from attune_judge.calibration.agreement._pairwise import PairAgreement, pair_agreement
from attune_judge.calibration.agreement._reliability import krippendorff_alpha
from attune_judge.calibration.agreement._table import ratings_to_table
from attune_judge.calibration.resampling._bootstrap import interval_endpoints
from attune_judge.calibration.resampling._means import paired_cluster_bootstrap
from attune_judge.calibration.resampling._ratio import ClusterSums
from attune_judge.data import Rating
from attune_judge.errors import UserError

__all__ = [
    "MemberAgreement",
    "PanelAgreement",
    "SelfPreference",
    "model_family",
    "panel_agreement",
]

_ALIASES = {"o": "gpt", "chatgpt": "gpt", "local": "smollm", "smollm2": "smollm"}
_NOT_MODELS = {"original", "llm", "human", "reference", "context", "brief", "warm"}


def model_family(name: str | None) -> str | None:
    """The model family of a model string or candidate name (``None`` if it names none).

    >>> model_family("openai/gpt-4o-mini"), model_family("anthropic/claude-3-5-haiku")
    ('gpt', 'claude')
    >>> model_family("gemini/gemini-2.5-flash"), model_family("ollama_chat/llama3.1")
    ('gemini', 'llama')
    >>> model_family("openai/o3"), model_family("local"), model_family("human_edited")
    ('gpt', 'smollm', None)
    """
    if not name:
        return None
    bare = name.rsplit("/", 1)[-1].lower()
    match = re.match(r"[a-z]+", bare)
    if match is None:
        return None
    family = _ALIASES.get(match.group(0), match.group(0))
    return None if family in _NOT_MODELS else family


class MemberAgreement(ResultModel):
    """One judge against the panel's consensus."""

    member: str
    """The judge (id)."""
    model: str | None
    """Its model string."""
    vs_consensus: PairAgreement
    """Agreement with the consensus on the items both have."""


class SelfPreference(ResultModel):
    """What a judge gives its own model family beyond what the other judges give."""

    member: str
    """The judge (id)."""
    model: str | None
    """Its model string."""
    family: str
    """Its model family, also the family of some candidates."""
    n_own: int
    """Judged items written by its own family."""
    n_other: int
    """Judged items written by other families (or by people)."""
    own_family: Metric
    """Mean of (this judge − the other judges' mean) on its own family's candidates."""
    other_families: Metric | None
    """The same on the other candidates (its general leniency)."""
    bias: Metric | None
    """``own_family − other_families``: self-preference beyond leniency."""


class PanelAgreement(ResultModel):
    """Agreement within a panel of judges (see the module docstring)."""

    kind: str
    """``scores`` (normalised scores) or ``verdicts`` (pairwise)."""
    raters: list[str]
    """The judges (ids)."""
    models: dict[str, str | None]
    """Judge id → model string."""
    n_items: int
    """Items judged by at least two judges."""
    alpha: Metric | None
    """Krippendorff's α among the judges."""
    members: list[MemberAgreement]
    """Each judge against the consensus."""
    self_preference: list[SelfPreference]
    """One entry per judge whose family wrote candidates (scores only)."""
    notes: list[str]
    """What could not be computed, and why."""


def _consensus(values: Sequence[float | str], numeric: bool) -> float | str:
    if numeric:
        return float(statistics.fmean(float(v) for v in values))
    counts = Counter(str(v) for v in values)
    top = max(counts.values())
    tied = sorted(v for v, n in counts.items() if n == top)
    return tied[0] if len(tied) == 1 else "tie"


def _self_preference(
    rater: str,
    family: str,
    values: Mapping[str, Mapping[str, float | str]],
    clusters: Mapping[str, str],
    families: Mapping[str, str | None],
    *,
    B: int,
    level: float,
    seed: int,
    model: str | None,
) -> SelfPreference | None:
    labels: list[str] = []
    cl: list[str] = []
    diffs: list[float] = []
    for item, value in values[rater].items():
        others = [float(values[r][item]) for r in values if r != rater and item in values[r]]
        if not others:
            continue
        labels.append("own" if families.get(item) == family else "other")
        cl.append(clusters.get(item, item))
        diffs.append(float(value) - statistics.fmean(others))
    if "own" not in labels:
        return None
    res = paired_cluster_bootstrap(
        ClusterSums.from_long(labels, cl, diffs), B=B, level=level, seed=seed
    )
    by = dict(zip(res.labels, res.means, strict=True))
    own = by["own"].model_copy(update={"name": "self_preference_own_family"})
    other = by.get("other")
    bias = None
    if other is not None and other.estimate is not None and own.estimate is not None:
        i, j = res.labels.index("own"), res.labels.index("other")
        reps = res.replicates[:, i] - res.replicates[:, j]
        est = own.estimate - other.estimate
        ends = interval_endpoints(est, reps, level=level, method="percentile")
        bias = Metric(
            name="self_preference_bias",
            estimate=est,
            lower=ends.lower,
            upper=ends.upper,
            level=level,
            method=ends.method,
            requested_method="percentile",
            B=res.B,
            seed=seed,
            n_clusters=res.n_clusters,
            n=len(diffs),
        )
    return SelfPreference(
        member=rater,
        model=model,
        family=family,
        n_own=labels.count("own"),
        n_other=labels.count("other"),
        own_family=own,
        other_families=(
            other.model_copy(update={"name": "self_preference_other_families"}) if other else None
        ),
        bias=bias,
    )


def panel_agreement(
    values: Mapping[str, Mapping[str, float | str]],
    clusters: Mapping[str, str],
    *,
    models: Mapping[str, str | None] | None = None,
    candidate_models: Mapping[str, str | None] | None = None,
    consensus: Mapping[str, float | str] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> PanelAgreement:
    """Agreement within a panel of judges.

    Parameters
    ----------
    values
        Judge id → item id → value (a normalised score, or a verdict ``A``/``B``/``tie``).
    clusters
        Item id → conversation.
    models
        Judge id → model string (for the family in self-preference).
    candidate_models
        Item id → the model that wrote the judged reply.
    consensus
        Item id → the jury's combined value (default: mean of scores, majority of verdicts).
    """
    raters = sorted(values)
    if len(raters) < 2:
        raise UserError("a panel needs at least two judges")
    models = dict(models or {})
    numeric = all(isinstance(v, int | float) for r in raters for v in values[r].values())
    items = sorted({i for r in raters for i in values[r]})
    shared = [i for i in items if sum(i in values[r] for r in raters) >= 2]
    notes: list[str] = []
    alpha = None
    if shared:
        ratings = [
            Rating(item_id=i, rater=r, dimension="panel", value=values[r][i], cluster=clusters[i])
            for r in raters
            for i in shared
            if i in values[r]
        ]
        table = ratings_to_table(ratings, "panel")
        alpha = krippendorff_alpha(
            table, "interval" if numeric else "nominal", level=level, B=B, seed=seed
        )
    else:
        notes.append("no item was judged by two judges")
    cons = dict(consensus or {})
    if not cons:
        for i in shared:
            cons[i] = _consensus([values[r][i] for r in raters if i in values[r]], numeric)
    metrics = ["spearman", "pearson", "mae"] if numeric else ["raw_agreement", "cohen_kappa"]
    members: list[MemberAgreement] = []
    for r in raters:
        common = [i for i in values[r] if i in cons]
        if len(common) < 2:
            notes.append(f"{r}: fewer than two items with a consensus")
            continue
        members.append(
            MemberAgreement(
                member=r,
                model=models.get(r),
                vs_consensus=pair_agreement(
                    [values[r][i] for i in common],
                    [cons[i] for i in common],
                    [clusters[i] for i in common],
                    x_name=r,
                    y_name="consensus",
                    metrics=metrics,
                    level=level,
                    B=B,
                    seed=seed,
                ),
            )
        )
    prefs: list[SelfPreference] = []
    families = {i: model_family(m) for i, m in (candidate_models or {}).items()}
    if numeric and any(families.values()):
        for r in raters:
            fam = model_family(models.get(r))
            if fam is None or fam not in families.values():
                continue
            pref = _self_preference(
                r, fam, values, clusters, families, B=B, level=level, seed=seed, model=models.get(r)
            )
            if pref is not None:
                prefs.append(pref)
    elif not numeric:
        notes.append("self-preference is measured on scores, not on pairwise verdicts")
    if numeric and not prefs:
        notes.append("no judge's model family wrote any of the judged candidates")
    return PanelAgreement(
        kind="scores" if numeric else "verdicts",
        raters=raters,
        models={r: models.get(r) for r in raters},
        n_items=len(shared),
        alpha=alpha,
        members=members,
        self_preference=prefs,
        notes=notes,
    )
