"""Preference agreement: a judge's pairwise verdicts against participants' choices.

A judge's verdict comes either from a pairwise judge (``Preference`` records with the same item
ids) or from its scores of the two responses, turned into a verdict with a declared tie margin
(``scores_to_verdict``). Tie policy (``tie_policy``), stated in every result:

- ``strict`` (default): agreement means the same label; a tie agrees only with a tie.
- ``half``: a tie against a non-tie counts ½.
- ``exclude``: comparisons where either side is a tie are left out (and counted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, JoinReport, Metric, ResultModel
from attune_judge.calibration.agreement._pairwise import pair_agreement
from attune_judge.calibration.agreement._table import join_report, one_label_per_rater
from attune_judge.calibration.resampling._bootstrap import few_clusters_warning
from attune_judge.calibration.resampling._means import paired_cluster_bootstrap
from attune_judge.calibration.resampling._ratio import ClusterSums
from attune_judge.data import Preference
from attune_judge.errors import UserError

__all__ = [
    "PreferenceAgreement",
    "TiePolicy",
    "judge_preferences_from_scores",
    "preference_agreement",
    "scores_to_verdict",
]

TiePolicy = Literal["strict", "half", "exclude"]
_SWAP = {"A": "B", "B": "A", "tie": "tie"}


def scores_to_verdict(score_a: float, score_b: float, margin: float = 0.0) -> str:
    """``A`` if ``score_a − score_b > margin``, ``B`` if ``< −margin``, else ``tie``."""
    d = score_a - score_b
    return "A" if d > margin else "B" if d < -margin else "tie"


def _default_key(pref: Preference, option: str) -> str:
    meta = pref.metadata
    if "conversation_id" in meta and "turn" in meta:
        return f"{meta['conversation_id']}:{meta['turn']}:{option}"
    return f"{pref.item_id}:{option}"


def judge_preferences_from_scores(
    human: Sequence[Preference],
    scores: Mapping[str, float],
    *,
    judge: str = "judge",
    margin: float = 0.0,
    key: Callable[[Preference, str], str] = _default_key,
) -> list[Preference]:
    """Turn a judge's scores of single responses into verdicts on the humans' comparisons.

    Parameters
    ----------
    human
        The participants' comparisons.
    scores
        Judge score per judged item id.
    judge, margin
        Rater name of the produced records; tie margin (``|Δ| ≤ margin`` is a tie).
    key
        Item id of the judged response for ``(preference, option)``; the default fits
        AttuneBench: ``<conversation>:<turn>:<option>`` from the preference's metadata.

    Comparisons whose two responses were not both scored are skipped.
    """
    out = []
    for p in human:
        a, b = scores.get(key(p, p.option_a)), scores.get(key(p, p.option_b))
        if a is None or b is None:
            continue
        out.append(
            p.model_copy(
                update={
                    "winner": scores_to_verdict(a, b, margin),
                    "rater": judge,
                    "rater_group": "judge",
                    "metadata": {**p.metadata, "score_a": a, "score_b": b, "margin": margin},
                }
            )
        )
    return out


class PreferenceAgreement(ResultModel):
    """Judge–participant agreement on pairwise choices, overall and per question."""

    tie_policy: str
    """How ties counted (see module docs)."""
    overall: Metric
    """Share of comparisons on which judge and participant agree."""
    kappa: Metric | None
    """Cohen's κ (unweighted) over the labels A / B / tie, overall."""
    per_question: dict[str, Metric]
    """Agreement per question id (paired over the same cluster draws)."""
    n_compared: int
    """Comparisons compared."""
    n_excluded_ties: int
    """Comparisons dropped by ``tie_policy='exclude'``."""
    n_unanswered: int
    """Matched comparisons without an answer on either side."""
    join: JoinReport
    """How the human and judge comparisons matched on item id."""
    n_clusters: int = 0
    """Clusters (conversations) the comparisons come from (the bootstrap's resampling units)."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats: fewer than ``MIN_CLUSTERS`` conversations (intervals unreliable)."""


def _score(h: str, j: str, policy: TiePolicy) -> float:
    if h == j:
        return 1.0
    if policy == "half" and "tie" in (h, j):
        return 0.5
    return 0.0


def preference_agreement(
    human: Sequence[Preference],
    judge: Sequence[Preference],
    *,
    tie_policy: TiePolicy = "strict",
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> PreferenceAgreement:
    """Agreement of judge verdicts with human choices, matched on ``item_id``.

    When the judge record lists the two options in the other order, its verdict is swapped
    before comparing. Several human records for one item are each compared with the judge (a
    rater's choice counts once; two different choices of one rater are refused:
    :func:`~attune_judge.calibration.one_label_per_rater`).
    """
    human = one_label_per_rater(human)
    jmap: dict[str, Preference] = {}
    for p in judge:
        jmap.setdefault(p.item_id, p)
    join = join_report({p.item_id for p in human}, jmap, left_name="human", right_name="judge")
    hv, jv, clusters, questions, vals = [], [], [], [], []
    unanswered = excluded = 0
    for p in human:
        j = jmap.get(p.item_id)
        if j is None:
            continue
        if p.winner is None or j.winner is None or j.winner not in _SWAP:
            unanswered += 1
            continue
        jw: str = j.winner
        if (j.option_a, j.option_b) == (p.option_b, p.option_a) and p.option_a != p.option_b:
            jw = _SWAP[jw]
        if tie_policy == "exclude" and "tie" in (p.winner, jw):
            excluded += 1
            continue
        hv.append(p.winner)
        jv.append(jw)
        clusters.append(p.cluster or p.item_id)
        questions.append(p.question)
        vals.append(_score(p.winner, jw, tie_policy))
    if not vals:
        raise UserError("no comparison has an answer from both the human and the judge")
    kw = {"B": B, "level": level, "seed": seed, "method": method}
    overall = paired_cluster_bootstrap(
        ClusterSums.from_long(["all"] * len(vals), clusters, vals),
        **kw,  # type: ignore[arg-type]
    ).means[0]
    per_q = paired_cluster_bootstrap(
        ClusterSums.from_long(questions, clusters, vals),
        **kw,  # type: ignore[arg-type]
    )
    kappa = None
    if len(vals) >= 2:
        kappa = pair_agreement(
            jv,
            hv,
            clusters,
            x_name="judge",
            y_name="human",
            metrics=["cohen_kappa"],
            **kw,  # type: ignore[arg-type]
        ).metrics.get("cohen_kappa")
    return PreferenceAgreement(
        tie_policy=tie_policy,
        overall=overall.model_copy(update={"name": "preference_agreement"}),
        kappa=kappa,
        per_question={
            q: m.model_copy(update={"name": f"preference_agreement[{q}]"})
            for q, m in zip(per_q.labels, per_q.means, strict=True)
        },
        n_compared=len(vals),
        n_excluded_ties=excluded,
        n_unanswered=unanswered,
        join=join,
        n_clusters=len(set(clusters)),
        warnings=[w for w in [few_clusters_warning(len(set(clusters)))] if w],
    )
