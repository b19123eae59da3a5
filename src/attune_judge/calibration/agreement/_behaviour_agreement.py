"""Behaviour items: a judge's yes/no answers against the participants' own, per item and category.

Both sides use the same names: item id (``<conversation>:<turn>:original``) and dimension
``<behaviour item>:<view>``. The judge answers as an observer of the reply (``B1:observed``);
a participant said whether the reply did it (``B1:observed``) and whether they wanted it
(``B1:preferred``). A judge answer is compared with the participant's answer of the same view;
``na`` and unanswered participant answers are left out (and counted).

Agreement is the raw share of equal answers and Cohen's κ over yes/no, each with a
cluster-bootstrap interval over conversations: per behaviour item, per category (items pooled),
and over all items. The yes-rates of both sides show a judge that says yes (or no) too often;
with ``yes`` as the positive class, each group also has the judge's TPR, TNR, precision, NPV,
balanced accuracy and leniency (:func:`~attune_judge.calibration.binary_agreement`, same
draws) beside its confusion counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from pydantic import Field

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration._results import IntervalMethod, JoinReport, Metric, ResultModel
from attune_judge.calibration.agreement._binary import BinaryAgreement, binary_agreement
from attune_judge.calibration.agreement._pairwise import pair_agreement
from attune_judge.calibration.agreement._table import join_report, one_label_per_rater
from attune_judge.calibration.resampling._bootstrap import few_clusters_warning
from attune_judge.data import Judgment, Rating, behaviour_item_order
from attune_judge.errors import UserError

__all__ = [
    "BehaviourAgreement",
    "BehaviourGroup",
    "behaviour_agreement",
    "behaviour_metrics",
    "is_behaviour_dimension",
    "judgments_to_behaviour_ratings",
]

_VIEWS = ("observed", "preferred")


def is_behaviour_dimension(dimension: str) -> bool:
    """``B1:observed`` / ``B12:preferred`` style dimension names."""
    item, _, view = dimension.partition(":")
    return view in _VIEWS and bool(item)


def _yes_no(value: object) -> str | None:
    if isinstance(value, str):
        v = value.strip().lower()
        return v if v in ("yes", "no") else None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return "yes" if value == 1 else "no" if value == 0 else None
    return None


def judgments_to_behaviour_ratings(judgments: Iterable[Judgment]) -> list[Rating]:
    """A behaviour judge's answers as ``Rating`` records (value ``yes`` / ``no``).

    One record per ok judgment and behaviour dimension in its ``scores``
    (``B1:observed`` → 1.0 / 0.0); rater = the judge id.
    """
    out = []
    for j in judgments:
        if j.status != "ok":
            continue
        for dim, value in sorted(j.scores.items()):
            answer = _yes_no(value)
            if is_behaviour_dimension(dim) and answer is not None:
                out.append(
                    Rating(
                        item_id=j.item_id,
                        rater=j.judge_id,
                        rater_group="judge",
                        dimension=dim,
                        value=answer,
                        cluster=j.conversation_id,
                        metadata={"polarity": (j.details.get("polarity") or {}).get(dim)},
                    )
                )
    return out


class BehaviourGroup(ResultModel):
    """Agreement on one behaviour item, one category, or all items."""

    name: str
    """Item id (``B1``), category name, or ``all``."""
    n: int
    """(Item, behaviour) pairs with a yes/no answer on both sides."""
    n_clusters: int
    """Conversations among them."""
    agreement: Metric | None
    """Share of equal answers (``None`` below two pairs)."""
    kappa: Metric | None
    """Cohen's κ over yes/no (undefined when one side gives a single answer)."""
    judge_yes_rate: float
    """Share of the judge's answers that are yes."""
    human_yes_rate: float
    """Share of the participants' answers that are yes."""
    binary: BinaryAgreement | None = None
    """TPR, TNR, precision, NPV, balanced accuracy, leniency (yes = pass), with intervals."""


class BehaviourAgreement(ResultModel):
    """A behaviour judge against the participants: per item, per category, overall."""

    view: str
    """The participants' view compared (``observed``: did the reply do it)."""
    overall: BehaviourGroup
    """All items pooled."""
    per_category: list[BehaviourGroup]
    """Items pooled within each category of the instrument."""
    per_item: list[BehaviourGroup]
    """One row per behaviour item."""
    n_human_na: int
    """Participant answers ``na`` or unanswered on judged items (left out)."""
    join: JoinReport
    """How (item, dimension) keys matched."""
    warnings: list[str] = Field(default_factory=list)
    """Caveats of every interval here (too few conversations)."""


def _group(
    name: str,
    rows: Sequence[tuple[str, str, str]],
    *,
    B: int,
    level: float,
    seed: int,
    method: IntervalMethod,
    label: str | None = None,
) -> BehaviourGroup:
    """One group's agreement; ``label`` names it in its pass/fail figures (default ``name``)."""
    judge = [r[0] for r in rows]
    human = [r[1] for r in rows]
    clusters = [r[2] for r in rows]
    agreement = kappa = None
    if len(rows) >= 2:
        res = pair_agreement(
            judge,
            human,
            clusters,
            x_name="judge",
            y_name="participants",
            metrics=["raw_agreement", "cohen_kappa"],
            scale=["no", "yes"],
            B=B,
            level=level,
            seed=seed,
            method=method,
        )
        agreement = res.metrics.get("raw_agreement")
        kappa = res.metrics.get("cohen_kappa")
    n = len(rows)
    binary = binary_agreement(
        judge, human, clusters, name=label or name, B=B, level=level, seed=seed, method=method
    )
    return BehaviourGroup(
        name=name,
        n=n,
        n_clusters=len(set(clusters)),
        agreement=agreement,
        kappa=kappa,
        judge_yes_rate=sum(j == "yes" for j in judge) / n,
        human_yes_rate=sum(h == "yes" for h in human) / n,
        binary=binary,
    )


def behaviour_agreement(
    human: Sequence[Rating],
    judge: Sequence[Rating],
    *,
    view: str = "observed",
    categories: Mapping[str, str] | None = None,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
    method: IntervalMethod = "bca",
) -> BehaviourAgreement:
    """Agreement of a behaviour judge with the participants' answers of one ``view``.

    Parameters
    ----------
    human
        Participants' behaviour ratings (``attunebench_to_ratings``: dimensions
        ``B1:observed`` / ``B1:preferred``, values yes / no / na / None).
    judge
        The judge's answers (:func:`judgments_to_behaviour_ratings`), view ``observed``.
    view
        Which participant view to compare with.
    categories
        Behaviour item → category (default: the participants' ratings' ``metadata.category``).
    """
    if view not in _VIEWS:
        raise UserError(f"behaviour view must be one of {_VIEWS}, not {view!r}")
    jmap: dict[tuple[str, str], tuple[str, str]] = {}
    for r in judge:
        item, _, jview = r.dimension.partition(":")
        answer = _yes_no(r.value)
        if answer is not None and jview == "observed":
            jmap[(r.item_id, item)] = (answer, str(r.cluster or r.item_id))
    cats: dict[str, str] = dict(categories or {})
    hkeys: set[str] = set()
    rows_by_item: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    n_na = 0
    for r in one_label_per_rater(human):
        item, _, hview = r.dimension.partition(":")
        if hview != view:
            continue
        if categories is None and r.metadata.get("category"):
            cats.setdefault(item, str(r.metadata["category"]))
        key = (r.item_id, item)
        hkeys.add(f"{r.item_id}|{item}")
        if key not in jmap:
            continue
        answer = _yes_no(r.value)
        if answer is None:
            n_na += 1
            continue
        judged, cluster = jmap[key]
        rows_by_item[item].append((judged, answer, str(r.cluster or cluster)))
    join = join_report(
        hkeys,
        {f"{i}|{b}" for i, b in jmap},
        left_name="participants",
        right_name="judge",
        require_match=False,
    )
    all_rows = [row for rows in rows_by_item.values() for row in rows]
    if not all_rows:
        raise UserError(
            f"no behaviour answer of the judge matches a participant's {view!r} answer "
            "(item ids <conversation>:<turn>:original, dimensions like B1:observed)",
            [
                f"matched keys: {join.matched}; examples only in the judge's: "
                f"{join.right_only_examples[:3]}; only in the participants': "
                f"{join.left_only_examples[:3]}"
            ],
        )
    kw = {"B": B, "level": level, "seed": seed, "method": method}
    by_cat: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for item, rows in rows_by_item.items():
        by_cat[cats.get(item, "uncategorised")].extend(rows)
    few = few_clusters_warning(len({row[2] for row in all_rows}))
    return BehaviourAgreement(
        view=view,
        overall=_group("all", all_rows, label="all items", **kw),  # type: ignore[arg-type]
        per_category=[
            _group(c, r, label=f"category {c}", **kw)  # type: ignore[arg-type]
            for c, r in sorted(by_cat.items())
        ],
        per_item=[
            _group(i, rows_by_item[i], label=f"item {i}", **kw)  # type: ignore[arg-type]
            for i in sorted(rows_by_item, key=behaviour_item_order)
        ],
        n_human_na=n_na,
        join=join,
        warnings=[few] if few else [],
    )


def behaviour_metrics(a: BehaviourAgreement) -> dict[str, Metric]:
    """``label → Metric`` of a behaviour agreement, as a run's ``calibration`` block lists
    them (with the join and the view): agreement and κ per scope, then agreement per item."""
    metrics: dict[str, Metric] = {}
    for scope, groups in (("all items", [a.overall]), ("category", a.per_category)):
        for g in groups:
            label = scope if scope == "all items" else f"{scope} {g.name}"
            if g.agreement is not None:
                metrics[f"{label}: agreement"] = g.agreement
            if g.kappa is not None:
                metrics[f"{label}: Cohen's κ"] = g.kappa
    for g in a.per_item:
        if g.agreement is not None:
            metrics[f"item {g.name}: agreement"] = g.agreement
    return metrics
