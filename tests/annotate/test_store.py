"""The labels database: assignment to k, never twice, leases, undo, resume after reopen."""

from __future__ import annotations

from pathlib import Path

import pytest

from attune_judge.annotate import LabelStore, load_items
from attune_judge.errors import UserError
from attune_judge.rubrics import load_rubric
from tests.annotate._fixtures import make_items, make_rubric


def _store(tmp_path: Path, k: int = 2) -> LabelStore:
    items, _ = load_items(make_items(tmp_path), str(make_rubric(tmp_path)))
    store = LabelStore(tmp_path / "labels.sqlite")
    store.set_up("ratings", load_rubric(make_rubric(tmp_path)).model_dump(mode="json"), k, items)
    for name in ("alice", "bob", "carol"):
        store.add_annotator(name)
    return store


def _label(store: LabelStore, who: str, now: float = 0.0) -> str | None:
    item = store.next_item(who, now=now)
    if item is not None:
        assert store.record(who, item, "label", {"warmth": 3, "fit": 3})
    return item


def test_each_item_gets_k_labels_and_nobody_sees_an_item_twice(tmp_path: Path) -> None:
    store = _store(tmp_path, k=2)
    seen: dict[str, list[str]] = {"alice": [], "bob": [], "carol": []}
    for _ in range(20):
        for who in seen:
            item = _label(store, who)
            if item is not None:
                seen[who].append(item)
    for who, items in seen.items():
        assert len(items) == len(set(items)), who
    per_item: dict[str, int] = {}
    for row in store.labels():
        per_item[row["item_id"]] = per_item.get(row["item_id"], 0) + 1
    assert sorted(per_item.values()) == [2] * 6
    assert sum(len(v) for v in seen.values()) == 12
    assert store.progress()["complete_items"] == 6
    assert all(store.next_item(w) is None for w in seen)


def test_an_open_item_is_reserved_until_its_lease_ends(tmp_path: Path) -> None:
    store = _store(tmp_path, k=1)
    a = store.next_item("alice", now=1000.0)
    b = store.next_item("bob", now=1000.0)
    assert a != b  # alice's open item is not handed to bob while she has it on screen
    assert store.next_item("alice", now=1001.0) == a  # and comes back to her
    # once the leases are old (a day later), alice's item (the first in order) is free for others
    assert store.next_item("carol", now=1000.0 + 86_400) == a


def test_undo_reopens_the_last_answer_only(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = _label(store, "alice")
    second = store.next_item("alice")
    assert second is not None and store.record("alice", second, "skip")
    assert store.undo("alice") == second
    assert store.next_item("alice") == second
    assert [r["item_id"] for r in store.labels(None)] == [first]
    assert not store.record("alice", first, "label", {"warmth": 1, "fit": 1})  # no second label
    assert store.undo("bob") is None


def test_labels_survive_reopening_and_a_different_task_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    done = [_label(store, "alice") for _ in range(3)]
    store.close()
    again = LabelStore(tmp_path / "labels.sqlite")
    assert [r["item_id"] for r in again.labels()] == done
    assert again.next_item("alice") not in done
    with pytest.raises(UserError, match="made for task 'ratings'"):
        again.set_up("behaviours", {"id": "x"}, 1, [])


def test_not_a_database_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(UserError, match="not a labels database"):
        LabelStore(bad)
