"""The labels database: SQLite (stdlib), WAL journal, one transaction per label.

Tables: ``meta`` (task, rubric, k, the seed of the A/B order draw), ``items`` (the items in
their order, with the inclusion probability ``annotate sample`` recorded), ``annotators``
(name, token), ``labels`` (one row per annotator and item: a label, a skip or a flag; the
pair order shown; ``UNIQUE(annotator, item_id)`` so an item is never labelled twice by one
person) and ``leases`` (the item each annotator has open, so two people do not both take an
item's last missing label). A submitted label is committed before the answer is sent; a
killed server loses nothing and a restarted one continues where each annotator stopped.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attune_judge.data import JudgeItem
from attune_judge.errors import UserError

__all__ = ["LEASE_S", "LabelStore", "Row"]

LEASE_S = 600.0
"""Seconds an open item stays reserved for the annotator who has it on screen."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items(pos INTEGER PRIMARY KEY, item_id TEXT UNIQUE NOT NULL,
  key TEXT UNIQUE NOT NULL, conversation_id TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS annotators(name TEXT PRIMARY KEY, token TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS labels(seq INTEGER PRIMARY KEY AUTOINCREMENT,
  annotator TEXT NOT NULL REFERENCES annotators(name), item_id TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('label', 'skip', 'flag')),
  answers TEXT, swapped INTEGER NOT NULL DEFAULT 0, comment TEXT, created TEXT NOT NULL,
  UNIQUE(annotator, item_id));
CREATE TABLE IF NOT EXISTS leases(annotator TEXT PRIMARY KEY, item_id TEXT NOT NULL,
  at REAL NOT NULL);
"""

Row = dict[str, Any]


class LabelStore:
    """One labels database; thread-safe (one connection behind a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: not a labels database ({exc})") from None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def _tx(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        """One statement in its own committed transaction."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cur = self._db.execute(sql, args)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return cur

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    # -- set-up ---------------------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return dict(self._all("SELECT key, value FROM meta"))

    def set_up(self, task: str, rubric: dict[str, Any], k: int, items: Sequence[JudgeItem]) -> None:
        """Record task, rubric and k (refusing a database made for another), add new items."""
        if k < 1:
            raise UserError(f"--k must be at least 1, not {k}")
        want = {"task": task, "rubric": json.dumps(rubric, sort_keys=True), "k": str(k)}
        have = self.meta()
        for key in ("task", "rubric"):
            if key in have and have[key] != want[key]:
                what = json.loads(have[key])["id"] if key == "rubric" else have[key]
                raise UserError(f"{self.path}: made for {key} {what!r}; use another --db")
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            for key, value in {**want, "seed": secrets.token_hex(8)}.items():
                self._db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, value))
            self._db.execute("UPDATE meta SET value=? WHERE key='k'", (str(k),))
            start = self._db.execute("SELECT COALESCE(MAX(pos), -1) + 1 FROM items").fetchone()[0]
            seed = self._db.execute("SELECT value FROM meta WHERE key='seed'").fetchone()[0]
            for n, item in enumerate(items):
                key = hashlib.sha256(f"{seed}\0{item.item_id}".encode()).hexdigest()[:20]
                self._db.execute(
                    "INSERT OR IGNORE INTO items VALUES (?, ?, ?, ?, ?)",
                    (start + n, item.item_id, key, item.conversation_id, item.model_dump_json()),
                )
            self._db.execute("COMMIT")

    def add_annotator(self, name: str) -> str:
        """The annotator's token (made on first use)."""
        name = name.strip()
        if not name or len(name) > 64:
            raise UserError(f"--annotator: a name of 1 to 64 characters, not {name!r}")
        self._tx(
            "INSERT OR IGNORE INTO annotators VALUES (?, ?)", (name, secrets.token_urlsafe(18))
        )
        return str(self._all("SELECT token FROM annotators WHERE name=?", (name,))[0][0])

    def import_labels(
        self, rows: Sequence[tuple[str, str, dict[str, Any]]], meta: dict[str, str]
    ) -> tuple[int, int]:
        """Store ``(annotator, item_id, answers)`` labels, their annotators (made on first use)
        and ``meta`` entries in one transaction: all or nothing. Returns (stored, already
        answered)."""
        stored = present = 0
        now = datetime.now(UTC).isoformat()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for who in sorted({r[0] for r in rows}):
                    self._db.execute(
                        "INSERT OR IGNORE INTO annotators VALUES (?, ?)",
                        (who, secrets.token_urlsafe(18)),
                    )
                for who, item_id, answers in rows:
                    cur = self._db.execute(
                        "INSERT OR IGNORE INTO labels(annotator, item_id, action, answers,"
                        " swapped, comment, created) VALUES (?, ?, 'label', ?, 0, NULL, ?)",
                        (who, item_id, json.dumps(answers, sort_keys=True), now),
                    )
                    stored += cur.rowcount
                    present += 1 - cur.rowcount
                for key, value in meta.items():
                    self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return stored, present

    def annotators(self) -> dict[str, str]:
        """Name → token."""
        return dict(self._all("SELECT name, token FROM annotators ORDER BY name"))

    def annotator_for(self, token: str) -> str | None:
        rows = self._all("SELECT name FROM annotators WHERE token=?", (token,))
        return str(rows[0][0]) if rows else None

    # -- items ----------------------------------------------------------------------------
    def item(self, item_id: str) -> JudgeItem | None:
        rows = self._all("SELECT body FROM items WHERE item_id=?", (item_id,))
        return JudgeItem.model_validate_json(rows[0][0]) if rows else None

    def key_of(self, item_id: str) -> str:
        """The item's opaque key (what the page sees instead of the id, which may name the
        model)."""
        return str(self._all("SELECT key FROM items WHERE item_id=?", (item_id,))[0][0])

    def item_for_key(self, key: str) -> str | None:
        rows = self._all("SELECT item_id FROM items WHERE key=?", (key,))
        return str(rows[0][0]) if rows else None

    def items(self) -> list[JudgeItem]:
        rows = self._all("SELECT body FROM items ORDER BY pos")
        return [JudgeItem.model_validate_json(b) for (b,) in rows]

    def next_item(self, annotator: str, now: float | None = None) -> str | None:
        """The item ``annotator`` should label next, reserved for them (``None``: done).

        The item they had open comes back first; then items that still need labels, those
        closest to their k first (so items reach k and agreement can be computed early), in
        the items' order. An item this annotator answered, skipped or flagged never returns.
        """
        now = time.time() if now is None else now
        k = int(self.meta().get("k", "1"))
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute(
                """SELECT i.item_id FROM items i
                LEFT JOIN leases mine ON mine.annotator=? AND mine.item_id=i.item_id
                WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.item_id=i.item_id
                                  AND l.annotator=?)
                AND (mine.item_id IS NOT NULL OR
                     (SELECT COUNT(*) FROM labels l WHERE l.item_id=i.item_id
                      AND l.action='label')
                   + (SELECT COUNT(*) FROM leases s WHERE s.item_id=i.item_id
                      AND s.annotator<>? AND s.at>?) < ?)
                ORDER BY mine.item_id IS NULL,
                  (SELECT COUNT(*) FROM labels l WHERE l.item_id=i.item_id
                   AND l.action='label') DESC, i.pos
                LIMIT 1""",
                (annotator, annotator, annotator, now - LEASE_S, k),
            ).fetchone()
            if row is None:
                self._db.execute("DELETE FROM leases WHERE annotator=?", (annotator,))
            else:
                self._db.execute(
                    "INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (annotator, row[0], now)
                )
            self._db.execute("COMMIT")
        return None if row is None else str(row[0])

    # -- labels ---------------------------------------------------------------------------
    def record(
        self,
        annotator: str,
        item_id: str,
        action: str,
        answers: dict[str, Any] | None = None,
        swapped: bool = False,
        comment: str | None = None,
    ) -> bool:
        """Store one label/skip/flag in its own transaction; ``False`` if already answered."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO labels(annotator, item_id, action, answers, swapped, comment,"
                    " created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        annotator,
                        item_id,
                        action,
                        None if answers is None else json.dumps(answers, sort_keys=True),
                        int(swapped),
                        comment,
                        datetime.now(UTC).isoformat(),
                    ),
                )
            except sqlite3.IntegrityError:
                self._db.execute("ROLLBACK")
                return False
            self._db.execute("DELETE FROM leases WHERE annotator=?", (annotator,))
            self._db.execute("COMMIT")
            return True

    def undo(self, annotator: str) -> str | None:
        """Remove ``annotator``'s last label/skip/flag; its item reopens for them."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute(
                "SELECT seq, item_id FROM labels WHERE annotator=? ORDER BY seq DESC LIMIT 1",
                (annotator,),
            ).fetchone()
            if row is not None:
                self._db.execute("DELETE FROM labels WHERE seq=?", (row[0],))
                self._db.execute(
                    "INSERT OR REPLACE INTO leases VALUES (?, ?, ?)",
                    (annotator, row[1], time.time()),
                )
            self._db.execute("COMMIT")
        return None if row is None else str(row[1])

    def labels(self, action: str | None = "label") -> list[Row]:
        """Every stored row (of ``action``), oldest first."""
        rows = self._all(
            "SELECT seq, annotator, item_id, action, answers, swapped, comment, created "
            "FROM labels WHERE ? IS NULL OR action=? ORDER BY seq",
            (action, action),
        )
        keys = ("seq", "annotator", "item_id", "action", "answers", "swapped", "comment", "created")
        out = []
        for r in rows:
            row = dict(zip(keys, r, strict=True))
            row["answers"] = json.loads(row["answers"]) if row["answers"] else None
            row["swapped"] = bool(row["swapped"])
            out.append(row)
        return out

    def progress(self, annotator: str | None = None) -> dict[str, Any]:
        """Counts for the page: this annotator's answers, and the items' progress to k."""
        k = int(self.meta().get("k", "1"))
        n_items = self._all("SELECT COUNT(*) FROM items")[0][0]
        per_item = self._all("SELECT COUNT(*) FROM labels WHERE action='label' GROUP BY item_id")
        out: dict[str, Any] = {
            "items": n_items,
            "k": k,
            "labels": sum(n for (n,) in per_item),
            "complete_items": sum(1 for (n,) in per_item if n >= k),
        }
        if annotator is not None:
            mine = dict(
                self._all(
                    "SELECT action, COUNT(*) FROM labels WHERE annotator=? GROUP BY action",
                    (annotator,),
                )
            )
            out.update(
                annotator=annotator,
                labelled=mine.get("label", 0),
                skipped=mine.get("skip", 0),
                flagged=mine.get("flag", 0),
            )
        return out
