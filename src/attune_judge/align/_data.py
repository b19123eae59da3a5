"""Human labels with their items, ready to align a judge: a shipped set or your own files."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeItem, Rating, read_jsonl
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric

__all__ = ["AlignData", "LabelledItem", "load_align_data"]


class LabelledItem(BaseModel):
    """One item with the people's ratings on the rubric's criteria."""

    model_config = ConfigDict(extra="forbid")

    item: JudgeItem
    """What the judge sees."""
    human: dict[str, float]
    """Criterion → mean over raters (the target)."""
    raters: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Rater → criterion → value (for the human ceiling)."""

    @property
    def cluster(self) -> str:
        """The conversation (resampling and split unit)."""
        return self.item.conversation_id


class AlignData(BaseModel):
    """Labelled items plus where they came from."""

    model_config = ConfigDict(extra="forbid")

    source: str
    """Set name or label file."""
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
    rating dimensions.

    Parameters
    ----------
    labels
        Shipped set name, or path of a Rating JSONL.
    items
        JudgeItem JSONL holding the rated items (required with a file of labels).
    rubric
        Rubric name or YAML (default: the set's rubric; ``attunebench-reference`` for files).
    use_reference
        Show the judge the reference reply (default: only when every item has one).
    raters
        Keep only these raters (default: all; for shipped sets, the set's reference people).
    """
    from attune_judge.demo import VALIDATION_SETS
    from attune_judge.demo._run import load_calibration_set
    from attune_judge.rubrics import load_rubric

    name = str(labels)
    if name in VALIDATION_SETS and not Path(name).exists():
        spec = VALIDATION_SETS[name]
        from attune_judge._resources import shipped_dir

        all_ratings = [r for r in load_calibration_set(spec.calibration) if spec.humans(r)]
        item_path = items or shipped_dir("data") / spec.calibration / "items.jsonl"
        item_list = [i for i in read_jsonl(item_path, JudgeItem) if spec.items(i)]
        rubric_ref = rubric or spec.rubric
        default_ref = False
    else:
        path = Path(labels)
        if not path.is_file():
            raise UserError(
                f"{labels}: neither a label file nor a shipped set "
                f"({', '.join(sorted(VALIDATION_SETS))})"
            )
        if items is None:
            raise UserError(f"{labels}: --items (JudgeItem JSONL of the rated items) is needed")
        all_ratings = read_jsonl(path, Rating)
        item_list = read_jsonl(items, JudgeItem)
        rubric_ref = rubric or "attunebench-reference"
        default_ref = bool(item_list) and all(i.reference for i in item_list)
    if raters:
        all_ratings = [r for r in all_ratings if r.rater in raters]
    rub = load_rubric(rubric_ref)
    if rub.kind != "reference":
        raise UserError(
            f"rubric {rub.id!r} is {rub.kind!r}: align supports rating rubrics (kind reference) "
            "for now"
        )
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
