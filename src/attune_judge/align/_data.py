"""Human labels with their items, ready to align a judge: a shipped set or your own files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeItem, Preference, Rating, read_jsonl
from attune_judge.errors import UserError
from attune_judge.judges import pairwise_items_from_preferences
from attune_judge.rubrics import Rubric, load_rubric
from attune_judge.runner._inputs import is_judge_item_jsonl
from attune_judge.runner._pairs import load_pairwise_items
from attune_judge.validate import (
    VALIDATION_SETS,
    check_human_labels,
    load_calibration_set,
    read_labels,
)

__all__ = [
    "AlignData",
    "LabelledItem",
    "is_preference_file",
    "load_align_data",
    "load_preference_data",
    "majority",
]


def is_preference_file(path: Path) -> bool:
    """Whether the first record of a JSONL file is a Preference (has ``winner``, ``option_a``)."""
    import json

    try:
        with path.open("r", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    obj = json.loads(line)
                    return isinstance(obj, dict) and "winner" in obj and "option_a" in obj
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return False


class LabelledItem(BaseModel):
    """One item with the people's ratings on the rubric's criteria, or (a pair item) their
    pairwise choice."""

    model_config = ConfigDict(extra="forbid")

    item: JudgeItem
    """What the judge sees (a pair item for preferences: ``metadata["other"]`` = reply B)."""
    human: dict[str, float] = Field(default_factory=dict)
    """Criterion → mean over raters (the target of ratings)."""
    raters: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Rater → criterion → value (for the human ceiling)."""
    verdict: Literal["A", "B", "tie"] | None = None
    """Preferences: the people's choice (the majority over raters; A and B equally often:
    ``tie``)."""
    choices: dict[str, Literal["A", "B", "tie"]] = Field(default_factory=dict)
    """Preferences: rater → choice (for the human ceiling)."""

    @property
    def cluster(self) -> str:
        """The conversation (resampling and split unit)."""
        return self.item.conversation_id


class AlignData(BaseModel):
    """Labelled items plus where they came from."""

    model_config = ConfigDict(extra="forbid")

    source: str
    """Set name or label file."""
    kind: Literal["ratings", "preferences"] = "ratings"
    """Rating labels (scores per criterion) or Preference labels (A / B / tie per pair)."""
    rubric: str
    """Rubric name or path to judge with."""
    use_reference: bool
    """Whether the judge sees the item's reference reply."""
    items: list[LabelledItem]
    """Items with at least one labelled criterion."""
    criteria: list[str]
    """Criteria with human labels."""
    n_ratings: int
    """Numeric human ratings used."""


def _group(ratings: list[Rating], criteria: set[str]) -> tuple[dict, int]:
    by_item: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    n = 0
    for r in ratings:
        if r.dimension not in criteria or r.value is None or isinstance(r.value, str):
            continue
        by_item[r.item_id].setdefault(r.rater, {})[r.dimension] = float(r.value)
        n += 1
    return by_item, n


def _build(
    items: list[JudgeItem], ratings: list[Rating], rubric: Rubric
) -> tuple[list[LabelledItem], list[str], int]:
    criteria = {c.id for c in rubric.criteria}
    by_item, n = _group(ratings, criteria)
    out = []
    for it in sorted(items, key=lambda i: i.item_id):
        raters = by_item.get(it.item_id)
        if not raters:
            continue
        sums: dict[str, list[float]] = defaultdict(list)
        for vals in raters.values():
            for k, v in vals.items():
                sums[k].append(v)
        human = {k: sum(v) / len(v) for k, v in sums.items()}
        out.append(LabelledItem(item=it, human=human, raters=raters))
    used = sorted({k for li in out for k in li.human})
    return out, used, n


def load_align_data(
    labels: str | Path,
    *,
    items: Path | None = None,
    rubric: str | None = None,
    use_reference: bool | None = None,
    raters: list[str] | None = None,
) -> tuple[AlignData, Rubric]:
    """Labelled items from a shipped set name (see ``attune-judge validate --set``) or from a
    Rating JSONL plus a JudgeItem JSONL (``items``) with a rubric whose criterion ids are the
    rating dimensions, or from a Preference JSONL with its pairs (see
    :func:`load_preference_data`; rubric of kind pairwise).

    Parameters
    ----------
    labels
        Shipped set name, or path of a Rating or Preference JSONL.
    items
        JudgeItem JSONL holding the rated items (required with a file of labels); for
        preferences also AttuneBench data.
    rubric
        Rubric name or YAML (default: the set's rubric; ``attunebench-reference`` for files).
    use_reference
        Show the judge the reference reply (default: only when every item has one).
    raters
        Keep only these raters (default: all; for shipped sets, the set's reference people).
    """
    name = str(labels)
    if Path(name).is_file() and is_preference_file(Path(name)):
        return load_preference_data(Path(name), items=items, rubric=rubric, raters=raters)
    if name in VALIDATION_SETS and not Path(name).exists():
        spec = VALIDATION_SETS[name]
        from attune_judge._resources import shipped_dir

        all_ratings = [r for r in load_calibration_set(spec.calibration) if spec.humans(r)]
        item_path = items or shipped_dir("data") / spec.calibration / "items.jsonl"
        item_list = [i for i in read_jsonl(item_path, JudgeItem) if spec.items(i)]
        rubric_ref = rubric or spec.rubric
        default_ref = False
        label_file: Path | None = None
    else:
        path = Path(labels)
        if not path.is_file():
            raise UserError(
                f"{labels}: neither a label file nor a shipped set "
                f"({', '.join(sorted(VALIDATION_SETS))})"
            )
        if items is None:
            raise UserError(f"{labels}: --items (JudgeItem JSONL of the rated items) is needed")
        label_file = path
        all_ratings = read_labels(path, Rating)
        item_list = read_jsonl(items, JudgeItem)
        rubric_ref = rubric or "attunebench-reference"
        default_ref = bool(item_list) and all(i.reference for i in item_list)
    if raters:
        all_ratings = [r for r in all_ratings if r.rater in raters]
    rub = load_rubric(rubric_ref)
    if rub.kind != "reference":
        raise UserError(
            f"rubric {rub.id!r} is {rub.kind!r}: align takes ratings with a reference rubric, "
            "or a Preference JSONL with a pairwise rubric"
        )
    if label_file is not None:  # the checks calibrate makes, and each criterion's scale
        bounds = {c.id: rub.scale_of(c.id) for c in rub.criteria}
        scales = {k: (float(b.min), float(b.max)) for k, b in bounds.items()}
        check_human_labels(label_file, "nominal", scales=scales)
    labelled, used, n = _build(item_list, all_ratings, rub)
    if not used:
        dims = sorted({r.dimension for r in all_ratings})[:8]
        raise UserError(
            f"{labels}: no rating on a criterion of rubric {rub.id!r} joined an item "
            f"(rating dimensions {dims}; criteria {[c.id for c in rub.criteria][:8]})"
        )
    ref = default_ref if use_reference is None else use_reference
    if ref and any(not li.item.reference for li in labelled):
        raise UserError(f"{labels}: some items have no reference reply; align without it")
    data = AlignData(
        source=name,
        rubric=rubric_ref,
        use_reference=ref,
        items=labelled,
        criteria=used,
        n_ratings=n,
    )
    return data, rub


def majority(choices: Sequence[str]) -> str:
    """The most frequent choice; A and B equally frequent (and ahead of tie): ``tie``.

    >>> majority(["A"]), majority(["A", "B"]), majority(["A", "A", "tie"]), majority(["B", "tie"])
    ('A', 'tie', 'A', 'tie')
    """
    counts = {v: list(choices).count(v) for v in ("A", "B", "tie")}
    top = max(counts.values())
    winners = [v for v, n in counts.items() if n == top]
    return winners[0] if len(winners) == 1 else "tie"


def _pair_items(prefs: list[Preference], items: Path) -> list[JudgeItem]:
    """Pair items joined to the preferences: a JudgeItem JSONL of pairs (``metadata.other``)
    taken as it is; a JudgeItem JSONL of turns gives each preference's context (its texts from
    the preference); anything else is read as AttuneBench data (its comparisons' pairs)."""
    if is_judge_item_jsonl(items):
        given = read_jsonl(items, JudgeItem)
        if given and all(isinstance(i.metadata.get("other"), str) for i in given):
            return given
        return pairwise_items_from_preferences(prefs, given)
    return load_pairwise_items(items)


def load_preference_data(
    labels: Path,
    *,
    items: Path | None = None,
    rubric: str | None = None,
    raters: list[str] | None = None,
) -> tuple[AlignData, Rubric]:
    """Pairs with the people's choices, from a Preference JSONL (``attune-judge data
    preferences``) and ``items``: a JudgeItem JSONL of pairs (item id = the preference's id,
    ``metadata["other"]`` = reply B), a JudgeItem JSONL of turns (context per conversation and
    turn; texts from the preferences), or the AttuneBench data the preferences came from.

    Unanswered comparisons (``winner`` null) are left out; several raters of one comparison
    are combined by :func:`majority`. The rubric must be ``pairwise`` (default
    ``attunebench-pairwise``) and know every comparison's question.
    """
    prefs = [p for p in read_labels(Path(labels), Preference) if p.winner is not None]
    if raters:
        prefs = [p for p in prefs if p.rater in raters]
    if not prefs:
        raise UserError(f"{labels}: no answered comparison (winner A, B or tie) to align on")
    if items is None:
        raise UserError(
            f"{labels}: --items is needed: the pairs (JudgeItem JSONL), the turns giving their "
            "context, or the AttuneBench data the preferences came from"
        )
    rubric_ref = rubric or "attunebench-pairwise"
    rub = load_rubric(rubric_ref)
    if rub.kind != "pairwise":
        raise UserError(
            f"rubric {rub.id!r} is {rub.kind!r}: preferences are aligned with a pairwise "
            "rubric (e.g. attunebench-pairwise)"
        )
    known = {c.id for c in rub.criteria} | {"general"}
    for k, p in enumerate(prefs):
        if p.question not in known and not p.question.startswith("custom:"):
            raise UserError(
                f"{labels}: record {k + 1} ({p.item_id}): field question: {p.question!r} is "
                f"not a question of rubric {rub.id!r} ({', '.join(sorted(known))[:120]} or "
                "custom:<text>)"
            )
    by_item: dict[str, dict[str, str]] = defaultdict(dict)
    for p in prefs:
        by_item[p.item_id][p.rater] = str(p.winner)
    pairs = {i.item_id: i for i in _pair_items(prefs, Path(items))}
    out = []
    for iid in sorted(by_item):
        pair = pairs.get(iid)
        if pair is None:
            continue
        meta = {k: v for k, v in pair.metadata.items() if k != "human_winner"}
        choices = by_item[iid]
        out.append(
            LabelledItem(
                item=pair.model_copy(update={"metadata": meta}),
                verdict=majority(list(choices.values())),
                choices=choices,
            )
        )
    if not out:
        raise UserError(
            f"{labels}: no comparison joined a pair of {items} by item id "
            f"(first ids: {sorted(by_item)[:3]}; pairs: {sorted(pairs)[:3]})"
        )
    data = AlignData(
        source=str(labels),
        kind="preferences",
        rubric=rubric_ref,
        use_reference=False,
        items=out,
        criteria=[],
        n_ratings=sum(len(li.choices) for li in out),
    )
    return data, rub
