"""The run viewer's index: a SQLite file over a run's ``judgments.jsonl``, its items and the
people's labels, so the pages page, filter and sort on the server whatever the run's size.

The index is built once (stdlib ``sqlite3``, in a cache folder under the system's temporary
directory, never inside the run) and rebuilt when ``judgments.jsonl``, the items or the labels
change (their sizes and modification times are its key). A judgment's full record is read back
from ``judgments.jsonl`` at its byte offset, so the index holds only what the table shows,
filters and sorts on.

Tables:

- ``j``: one row per line of ``judgments.jsonl`` (``current`` = the line that counts, the last
  one of its ``(item_id, judge_id)``, as :func:`attune_judge.data.read_judgments` reads a run).
- ``s``: one row per (judgment, criterion): the judge's value, the people's median on the same
  item and criterion, ``|judge − people|``, and both rounded to the scale's levels (the
  confusion table's cells).
- ``h``: every person's value per (item, criterion).
- ``it``: the items (JSON), by id.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import statistics
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attune_judge.data import JudgeItem, Preference, Rating
from attune_judge.errors import UserError

__all__ = [
    "HumanLabel",
    "JudgmentIndex",
    "Query",
    "RawItem",
    "as_dict",
    "build_index",
    "human_value",
    "raw_items",
]

_SCHEMA = 3
"""Bumped when the tables change: an index of another version is rebuilt."""

_SORTS = {
    "order": "j.id",
    "model": "j.model",
    "item": "j.item_id",
    "status": "j.status",
    "latency": "j.latency",
    "cost": "j.cost",
    "overall": "j.overall",
}
"""Sort keys of the table besides ``score`` and ``diff`` (which depend on the criterion)."""


@dataclass(frozen=True)
class HumanLabel:
    """One person's value on one criterion of one item (numeric where it can be compared)."""

    item_id: str
    criterion: str
    rater: str
    shown: str
    """The value as the person gave it (``4``, ``yes``, ``A (model-x)``)."""
    value: float | None
    """The value on the judge's scale: the number, yes = 1 / no = 0, a pair's A = 1 / tie =
    0.5 / B = 0 in the judgment's own order; ``None`` when not comparable."""


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a record's optional fields)."""
    return value if isinstance(value, dict) else {}


def human_value(raw: float | str | None) -> float | None:
    """A rating's value on a numeric scale: numbers as they are, ``yes``/``no`` as 1/0."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, int | float):
        return float(raw)
    text = raw.strip().lower()
    return {"yes": 1.0, "no": 0.0}.get(text)


def humans_from_records(records: Iterable[Rating | Preference]) -> list[HumanLabel]:
    """People's labels from Rating / Preference records (a pair's choice is the criterion
    ``a_win`` in the record's own option order; :meth:`JudgmentIndex` flips it to a judgment's
    order when their options are swapped)."""
    out: list[HumanLabel] = []
    for r in records:
        if isinstance(r, Preference):
            if r.winner is None:
                continue
            shown: str = r.winner
            named = {"A": r.option_a, "B": r.option_b}.get(r.winner)
            if named:
                shown = f"{r.winner} ({named})"
            value = {"A": 1.0, "tie": 0.5, "B": 0.0}[r.winner]
            out.append(
                HumanLabel(r.item_id, f"a_win|{r.option_a}|{r.option_b}", r.rater, shown, value)
            )
        else:
            if r.value is None:
                continue
            text = f"{r.value:g}" if isinstance(r.value, float) else str(r.value)
            out.append(HumanLabel(r.item_id, r.dimension, r.rater, text, human_value(r.value)))
    return out


@dataclass(frozen=True)
class RawItem:
    """An item as its JSONL line (validated as a :class:`JudgeItem` only when shown)."""

    item_id: str
    body: str
    candidate: str
    other: Any = None


def raw_items(path: Path) -> Iterator[RawItem]:
    """The items of a JudgeItem JSONL file, unvalidated (an index of 100,000 items is built
    in seconds; a malformed item is reported on its page)."""
    with path.open("rb") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise UserError(f"{path}:{n}: not valid JSON") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("item_id"), str):
                raise UserError(f"{path}:{n}: field item_id: missing (not a JudgeItem record)")
            meta = as_dict(obj.get("metadata"))
            yield RawItem(
                obj["item_id"],
                line.decode("utf-8"),
                str(obj.get("candidate") or ""),
                meta.get("other"),
            )


@dataclass
class Query:
    """The table's filters, sort and page (every field from the page's query string)."""

    model: str = ""
    criterion: str = ""
    status: str = ""
    lo: float | None = None
    """Lowest score shown (the criterion's, or the overall score without a criterion)."""
    hi: float | None = None
    q: str = ""
    """Text searched in the item id, model, judge's rationale, failure and reply."""
    jv: str = ""
    """The judge's value, rounded to the scale's level (a confusion cell; needs criterion)."""
    hv: str = ""
    """The people's median, rounded (a confusion cell; needs criterion)."""
    joined: bool = False
    """Only judgments with people's labels."""
    all_lines: bool = False
    """Also the superseded lines of a re-judged item."""
    sort: str = "order"
    desc: bool = False
    page: int = 1
    per: int = 50

    @classmethod
    def parse(cls, params: dict[str, str]) -> Query:
        """From a query string (bad numbers are ignored, unknown sorts fall back to order)."""

        def num(key: str) -> float | None:
            try:
                value = float(params.get(key, "").strip())
            except ValueError:
                return None
            return value if value == value and abs(value) != float("inf") else None

        def integer(key: str, default: int, low: int, high: int) -> int:
            try:
                return max(low, min(high, int(params.get(key, default))))
            except ValueError:
                return default

        sort = params.get("sort", "order")
        if sort not in {*_SORTS, "score", "diff"}:
            sort = "order"
        return cls(
            model=params.get("model", ""),
            criterion=params.get("criterion", ""),
            status=params.get("status", ""),
            lo=num("lo"),
            hi=num("hi"),
            q=params.get("q", "")[:200],
            jv=params.get("jv", ""),
            hv=params.get("hv", ""),
            joined=params.get("joined") == "1",
            all_lines=params.get("all") == "1",
            sort=sort,
            desc=params.get("desc") == "1",
            page=integer("page", 1, 1, 10**7),
            per=integer("per", 50, 1, 500),
        )

    def params(self, **change: Any) -> dict[str, str]:
        """The query string of this query with ``change`` applied (defaults left out)."""
        values = {**self.__dict__, **change}
        out: dict[str, str] = {}
        for key, default in Query().__dict__.items():
            value = values[key]
            if value == default or value is None:
                continue
            name = {"all_lines": "all"}.get(key, key)
            out[name] = (
                "1" if value is True else (f"{value:g}" if isinstance(value, float) else str(value))
            )
        return out


@dataclass
class Row:
    """One line of the table."""

    id: int
    item_id: str
    judge_id: str
    model: str
    status: str
    overall: float | None
    verdict: str | None
    latency: float | None
    cost: float | None
    current: bool
    maxdiff: float | None
    scores: dict[str, float | None] = field(default_factory=dict)
    humans: dict[str, float | None] = field(default_factory=dict)
    diffs: dict[str, float | None] = field(default_factory=dict)


def _level(value: float | None, step: float) -> str | None:
    if value is None:
        return None
    return f"{round(value / step) * step:g}"


def _stat_key(paths: Sequence[Path | None]) -> str:
    parts = [str(_SCHEMA)]
    for p in paths:
        if p is None:
            parts.append("-")
            continue
        try:
            st = Path(p).stat()
        except OSError:
            parts.append(f"{p}:missing")
            continue
        parts.append(f"{Path(p).resolve()}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def cache_dir() -> Path:
    """Where indexes are kept (``$ATTUNE_VIEW_CACHE``, else the temporary directory's
    ``attune-view``)."""
    return Path(os.environ.get("ATTUNE_VIEW_CACHE") or Path(tempfile.gettempdir()) / "attune-view")


def _lines(path: Path) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """``(line number, offset, length, object)`` of each complete JSON line (a torn last
    line, a killed writer's, is skipped as every reader of a run skips it)."""
    offset = 0
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, start=1):
            size = len(raw)
            if raw.strip():
                try:
                    obj = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    if not raw.endswith(b"\n"):
                        break  # torn tail
                    raise UserError(f"{path}:{n}: not valid JSON") from None
                if not isinstance(obj, dict) or "item_id" not in obj or "judge_id" not in obj:
                    raise UserError(f"{path}:{n}: not a Judgment record (item_id, judge_id)")
                yield n, offset, size, obj
            offset += size


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def build_index(
    judgments: Path,
    db: Path,
    *,
    items: Iterable[JudgeItem | RawItem] = (),
    humans: Sequence[HumanLabel] = (),
) -> None:
    """Write the index of ``judgments`` (with ``items`` and ``humans``) to ``db`` (a temporary
    file renamed into place, so a reader never sees half an index)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    tmp = db.with_name(f"{db.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    try:
        con.executescript(
            """
            PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
            CREATE TABLE j(id INTEGER PRIMARY KEY, line INTEGER, off INTEGER, len INTEGER,
              item_id TEXT, judge_id TEXT, model TEXT, conv TEXT, status TEXT, overall REAL,
              verdict TEXT, latency REAL, cost REAL, current INTEGER, maxdiff REAL,
              search TEXT);
            CREATE TABLE s(jid INTEGER, criterion TEXT, value REAL, human REAL, nh INTEGER,
              diff REAL, jv TEXT, hv TEXT);
            CREATE TABLE h(item_id TEXT, criterion TEXT, rater TEXT, shown TEXT, value REAL);
            CREATE TABLE it(item_id TEXT PRIMARY KEY, body TEXT);
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
            """
        )
        texts: dict[str, str] = {}
        rows_it = []
        for i in items:
            if isinstance(i, JudgeItem):
                i = RawItem(i.item_id, i.model_dump_json(), i.candidate, i.metadata.get("other"))
            rows_it.append((i.item_id, i.body))
            texts[i.item_id] = i.candidate + "\n" + str(i.other or "")
        con.executemany("INSERT OR REPLACE INTO it VALUES (?, ?)", rows_it)
        by_item: dict[str, dict[str, list[HumanLabel]]] = {}
        for h in humans:
            by_item.setdefault(h.item_id, {}).setdefault(h.criterion, []).append(h)
        con.executemany(
            "INSERT INTO h VALUES (?, ?, ?, ?, ?)",
            ((h.item_id, h.criterion, h.rater, h.shown, h.value) for h in humans),
        )
        last: dict[tuple[str, str], int] = {}
        rows: list[tuple[Any, ...]] = []
        scores: list[list[Any]] = []
        for n, off, size, obj in _lines(judgments):
            jid = len(rows) + 1
            item_id, judge_id = str(obj["item_id"]), str(obj["judge_id"])
            last[(item_id, judge_id)] = jid
            details = as_dict(obj.get("details"))
            status = str(obj.get("status") or "ok")
            mine = by_item.get(item_id, {})
            for crit, value in (obj.get("scores") or {}).items():
                people = mine.get(crit)
                if people is None and crit == "a_win":
                    a, b = details.get("option_a"), details.get("option_b")
                    people = mine.get(f"a_win|{a}|{b}")
                    swapped = mine.get(f"a_win|{b}|{a}")
                    if people is None and swapped is not None:
                        people = [
                            HumanLabel(x.item_id, crit, x.rater, x.shown, 1 - x.value)
                            if x.value is not None
                            else x
                            for x in swapped
                        ]
                vals = [x.value for x in people or [] if x.value is not None]
                hmed = float(statistics.median(vals)) if vals else None
                v = _num(value)
                diff = (
                    abs(v - hmed) if v is not None and hmed is not None and status == "ok" else None
                )
                scores.append([jid, str(crit), v, hmed, len(vals), diff])
            search = " ".join(
                str(x)
                for x in (
                    item_id,
                    obj.get("candidate_model") or "",
                    obj.get("rationale") or "",
                    details.get("rationale_ba") or "",
                    obj.get("error") or "",
                    texts.get(item_id, ""),
                )
            ).lower()
            rows.append(
                (
                    jid,
                    n,
                    off,
                    size,
                    item_id,
                    judge_id,
                    str(obj.get("candidate_model") or ""),
                    str(obj.get("conversation_id") or ""),
                    status,
                    _num(obj.get("overall")),
                    obj.get("verdict"),
                    _num(obj.get("latency_s")),
                    _num(obj.get("cost")),
                    0,
                    None,
                    search,
                )
            )
        current = set(last.values())
        # the scale's levels: halves on a 0-1 scale (a pair's tie), whole levels otherwise
        top: dict[str, float] = {}
        for row in scores:
            for v in (row[2], row[3]):
                if v is not None:
                    top[row[1]] = max(top.get(row[1], v), abs(v))
        for row in scores:
            step = 0.5 if top.get(row[1], 0) <= 1 else 1.0
            row += [_level(row[2], step), _level(row[3], step)]
        maxdiff: dict[int, float] = {}
        for row in scores:
            if row[5] is not None:
                maxdiff[row[0]] = max(maxdiff.get(row[0], 0.0), row[5])
        con.executemany(
            "INSERT INTO j VALUES (" + ",".join("?" * 16) + ")",
            ((*r[:13], int(r[0] in current), maxdiff.get(r[0]), r[15]) for r in rows),
        )
        con.executemany("INSERT INTO s VALUES (?, ?, ?, ?, ?, ?, ?, ?)", scores)
        con.executescript(
            """
            CREATE INDEX j_model ON j(current, model);
            CREATE INDEX j_status ON j(current, status);
            CREATE INDEX j_item ON j(item_id);
            CREATE INDEX j_maxdiff ON j(current, maxdiff);
            CREATE INDEX j_latency ON j(current, latency);
            CREATE INDEX j_cost ON j(current, cost);
            CREATE INDEX s_jid ON s(jid, criterion);
            CREATE INDEX s_crit ON s(criterion, diff);
            CREATE INDEX h_item ON h(item_id);
            """
        )
        con.execute("INSERT INTO meta VALUES ('judgments', ?)", (str(judgments.resolve()),))
        con.commit()
    finally:
        con.close()
    os.replace(tmp, db)


def _row(r: Sequence[Any]) -> Row:
    return Row(
        id=r[0],
        item_id=r[1],
        judge_id=r[2],
        model=r[3],
        status=r[4],
        overall=r[5],
        verdict=r[6],
        latency=r[7],
        cost=r[8],
        current=bool(r[9]),
        maxdiff=r[10],
    )


class JudgmentIndex:
    """Read-only queries over one run's index (a connection per call: safe from any thread)."""

    def __init__(self, db: Path, judgments: Path) -> None:
        self.db, self.judgments = db, judgments
        with self._con() as con:
            self.criteria = [
                r[0] for r in con.execute("SELECT DISTINCT criterion FROM s ORDER BY criterion")
            ]
            self.models = [
                r[0]
                for r in con.execute("SELECT DISTINCT model FROM j WHERE current=1 ORDER BY model")
            ]
            self.statuses = [
                r[0] for r in con.execute("SELECT DISTINCT status FROM j ORDER BY status")
            ]
            self.has_humans = bool(con.execute("SELECT 1 FROM h LIMIT 1").fetchone())
            self.has_items = bool(con.execute("SELECT 1 FROM it LIMIT 1").fetchone())
            self.joined_criteria = [
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT criterion FROM s WHERE diff IS NOT NULL ORDER BY criterion"
                )
            ]

    @classmethod
    def open(
        cls,
        judgments: Path,
        *,
        key_files: Sequence[Path | None] = (),
        items: Any = None,
        humans: Any = None,
    ) -> JudgmentIndex:
        """The index of ``judgments``, built first when missing or stale. ``items`` and
        ``humans`` are callables giving the items and labels (called only on a rebuild);
        ``key_files`` are their files, whose change also rebuilds."""
        key = _stat_key([judgments, *key_files])
        db = cache_dir() / f"{key[:32]}.sqlite"
        if not db.exists():
            build_index(
                judgments,
                db,
                items=items() if items else (),
                humans=humans() if humans else (),
            )
        return cls(db, judgments)

    def _con(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, check_same_thread=False)

    # -- the table ------------------------------------------------------------------------

    def _where(self, q: Query) -> tuple[str, list[Any], str]:
        """The WHERE clause, its arguments, and the join of the chosen criterion."""
        where: list[str] = [] if q.all_lines else ["j.current=1"]
        args: list[Any] = []
        join = ""
        if q.criterion:
            join = "LEFT JOIN s ON s.jid=j.id AND s.criterion=?"
        if q.model:
            where.append("j.model=?")
            args.append(q.model)
        if q.status == "__failed__":
            where.append("j.status!='ok'")
        elif q.status:
            where.append("j.status=?")
            args.append(q.status)
        column = "s.value" if q.criterion else "j.overall"
        if q.lo is not None:
            where.append(f"{column}>=?")
            args.append(q.lo)
        if q.hi is not None:
            where.append(f"{column}<=?")
            args.append(q.hi)
        if q.criterion and q.jv:
            where.append("s.jv=?")
            args.append(q.jv)
        if q.criterion and q.hv:
            where.append("s.hv=?")
            args.append(q.hv)
        if q.joined:
            where.append("s.diff IS NOT NULL" if q.criterion else "j.maxdiff IS NOT NULL")
        if q.q.strip():
            where.append("instr(j.search, ?) > 0")
            args.append(q.q.strip().lower())
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        return clause, args, join

    def count(self, q: Query) -> int:
        clause, args, join = self._where(q)
        pre = [q.criterion] if join else []
        with self._con() as con:
            return int(
                con.execute(f"SELECT count(*) FROM j {join} {clause}", pre + args).fetchone()[0]
            )

    def rows(self, q: Query) -> list[Row]:
        """One page of the table."""
        clause, args, join = self._where(q)
        pre = [q.criterion] if join else []
        if q.sort == "score":
            key = "s.value" if q.criterion else "j.overall"
        elif q.sort == "diff":
            key = "s.diff" if q.criterion else "j.maxdiff"
        else:
            key = _SORTS[q.sort]
        direction = "DESC" if q.desc else "ASC"
        sql = (
            "SELECT j.id, j.item_id, j.judge_id, j.model, j.status, j.overall, j.verdict, "
            f"j.latency, j.cost, j.current, j.maxdiff FROM j {join} {clause} "
            f"ORDER BY ({key}) IS NULL, {key} {direction}, j.id LIMIT ? OFFSET ?"
        )
        with self._con() as con:
            found = [_row(r) for r in con.execute(sql, pre + args + [q.per, (q.page - 1) * q.per])]
            self._fill(con, found)
        return found

    def _fill(self, con: sqlite3.Connection, rows: list[Row]) -> None:
        if not rows:
            return
        by_id = {r.id: r for r in rows}
        marks = ",".join("?" * len(by_id))
        for jid, crit, value, human, diff in con.execute(
            f"SELECT jid, criterion, value, human, diff FROM s WHERE jid IN ({marks})",
            list(by_id),
        ):
            row = by_id[jid]
            row.scores[crit], row.humans[crit], row.diffs[crit] = value, human, diff

    def rows_by_id(self, ids: Sequence[int]) -> list[Row]:
        """The table's rows of these judgments, in this order."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        with self._con() as con:
            found = {
                r[0]: _row(r)
                for r in con.execute(
                    "SELECT id, item_id, judge_id, model, status, overall, verdict, latency, "
                    f"cost, current, maxdiff FROM j WHERE id IN ({marks})",
                    list(ids),
                )
            }
            rows = [found[i] for i in ids if i in found]
            self._fill(con, rows)
        return rows

    # -- disagreements -------------------------------------------------------------------

    def worst(self, k: int, criterion: str | None = None) -> list[Row]:
        """The ``k`` judgments furthest from the people (on ``criterion``, or on their worst
        criterion), largest first (ties in the run's order)."""
        with self._con() as con:
            if criterion:
                ids = [
                    r[0]
                    for r in con.execute(
                        "SELECT j.id FROM s JOIN j ON j.id=s.jid WHERE j.current=1 AND "
                        "s.criterion=? AND s.diff > 0 ORDER BY s.diff DESC, j.id LIMIT ?",
                        (criterion, k),
                    )
                ]
            else:
                ids = [
                    r[0]
                    for r in con.execute(
                        "SELECT id FROM j WHERE current=1 AND maxdiff > 0 "
                        "ORDER BY maxdiff DESC, id LIMIT ?",
                        (k,),
                    )
                ]
        return self.rows_by_id(ids)

    def confusion(self, criterion: str) -> tuple[list[str], list[str], dict[tuple[str, str], int]]:
        """Judge's level × people's level counts on ``criterion`` (joined, current judgments)."""
        with self._con() as con:
            cells = {
                (jv, hv): n
                for jv, hv, n in con.execute(
                    "SELECT s.jv, s.hv, count(*) FROM s JOIN j ON j.id=s.jid WHERE j.current=1 "
                    "AND s.criterion=? AND s.diff IS NOT NULL GROUP BY s.jv, s.hv",
                    (criterion,),
                )
            }
        levels = sorted({x for pair in cells for x in pair}, key=float)
        return levels, levels, cells

    def totals(self) -> dict[str, int]:
        """Judgments that count, by status, and the number joined with people's labels."""
        with self._con() as con:
            out = {
                s: n
                for s, n in con.execute(
                    "SELECT status, count(*) FROM j WHERE current=1 GROUP BY status"
                )
            }
            out["_all"] = sum(out.values())
            out["_lines"] = int(con.execute("SELECT count(*) FROM j").fetchone()[0])
            out["_joined"] = int(
                con.execute(
                    "SELECT count(*) FROM j WHERE current=1 AND maxdiff IS NOT NULL"
                ).fetchone()[0]
            )
        return out

    # -- one judgment --------------------------------------------------------------------

    def record(self, jid: int) -> tuple[dict[str, Any], Row] | None:
        """The judgment's full record (read back from ``judgments.jsonl``) and its row."""
        rows = self.rows_by_id([jid])
        if not rows:
            return None
        with self._con() as con:
            off, size = con.execute("SELECT off, len FROM j WHERE id=?", (jid,)).fetchone()
        with self.judgments.open("rb") as fh:
            fh.seek(off)
            obj = json.loads(fh.read(size))
        return obj, rows[0]

    def item(self, item_id: str) -> JudgeItem | str | None:
        """The item, or why it cannot be shown (not a valid JudgeItem), or ``None``."""
        with self._con() as con:
            found = con.execute("SELECT body FROM it WHERE item_id=?", (item_id,)).fetchone()
        if not found:
            return None
        try:
            return JudgeItem.model_validate_json(found[0])
        except ValueError as exc:
            return f"item {item_id!r} is not a valid JudgeItem ({str(exc).splitlines()[0]})"

    def labels(self, item_id: str) -> list[HumanLabel]:
        with self._con() as con:
            return [
                HumanLabel(item_id, crit.split("|")[0], rater, shown, value)
                for crit, rater, shown, value in con.execute(
                    "SELECT criterion, rater, shown, value FROM h WHERE item_id=? "
                    "ORDER BY criterion, rater",
                    (item_id,),
                )
            ]

    def attempts(self, item_id: str, judge_id: str) -> list[tuple[int, str]]:
        """Every line of this item and judge: ``(id, status)`` in the run's order."""
        with self._con() as con:
            return list(
                con.execute(
                    "SELECT id, status FROM j WHERE item_id=? AND judge_id=? ORDER BY id",
                    (item_id, judge_id),
                )
            )
