"""Split labelled items by conversation (cluster) into train / dev / test, reproducibly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from attune_judge.data._aligned import SplitSummary
from attune_judge.errors import UserError

__all__ = ["Split", "cluster_split"]


class Split(BaseModel):
    """Which conversations (and items) are in each part; saved with the aligned judge."""

    model_config = ConfigDict(extra="forbid")

    seed: int
    """Seed of the permutation of conversations."""
    fractions: tuple[float, float, float]
    """Requested shares of conversations for train, dev and test."""
    train: list[str]
    """Conversation ids the optimizer may use for demonstrations."""
    dev: list[str]
    """Conversation ids the optimizer may score candidate programs on."""
    test: list[str]
    """Conversation ids held out: never seen by the optimizer."""
    items: dict[str, list[str]]
    """Item ids per part (``train``, ``dev``, ``test``)."""

    def summary(self) -> SplitSummary:
        """The split counted, as the artifact's manifest records it."""
        return SplitSummary(
            seed=self.seed,
            fractions=list(self.fractions),
            conversations={k: len(getattr(self, k)) for k in ("train", "dev", "test")},
            items={k: len(v) for k, v in self.items.items()},
        )

    def part_of(self, cluster: str) -> str:
        """``train``, ``dev`` or ``test`` for a conversation id."""
        for name in ("train", "dev", "test"):
            if cluster in getattr(self, name):
                return name
        raise KeyError(cluster)


def cluster_split(
    item_ids: Sequence[str],
    clusters: Sequence[str],
    *,
    seed: int = 0,
    fractions: tuple[float, float, float] = (0.4, 0.2, 0.4),
) -> Split:
    """Assign whole conversations to train / dev / test.

    Parameters
    ----------
    item_ids, clusters
        One entry per labelled item: its id and its conversation.
    seed
        Seed of the permutation (same seed and data → same split).
    fractions
        Shares of conversations (normalised); each part gets at least one conversation.

    Raises
    ------
    UserError
        Fewer than three conversations, or a non-positive fraction.
    """
    if len(item_ids) != len(clusters):
        raise UserError("item ids and clusters must have the same length")
    if any(not f > 0 for f in fractions):
        raise UserError(f"split fractions must be positive, not {fractions}")
    convs = sorted(set(clusters))
    C = len(convs)
    if C < 3:
        raise UserError(f"aligning needs at least 3 conversations to split, found {C}")
    total = float(sum(fractions))
    shares = [f / total for f in fractions]
    order = [convs[k] for k in np.random.default_rng(seed).permutation(C)]
    n_train = max(1, round(shares[0] * C))
    n_dev = max(1, round(shares[1] * C))
    n_train = min(n_train, C - 2)
    n_dev = min(n_dev, C - n_train - 1)
    parts = {
        "train": sorted(order[:n_train]),
        "dev": sorted(order[n_train : n_train + n_dev]),
        "test": sorted(order[n_train + n_dev :]),
    }
    where = {c: name for name, cs in parts.items() for c in cs}
    items: dict[str, list[str]] = {"train": [], "dev": [], "test": []}
    for item, cluster in zip(item_ids, clusters, strict=True):
        items[where[cluster]].append(item)
    return Split(
        seed=seed,
        fractions=(float(fractions[0]), float(fractions[1]), float(fractions[2])),
        items=items,
        **parts,
    )
