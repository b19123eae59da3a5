"""Kumar et al. (2025) empathic-communication annotations: experts, crowd and three LLM judges.

Layout read (the authors' replication repository): ``annotations/<source>/<rater>_ratings.csv``
for the four sources and seven raters, ``annotations/combined_annotations_across_methods_and_
datasets.csv`` (used only as a cross-check) and ``original_data/`` (conversation texts, the
Perceived Empathy seekers' own ratings).

Ratings use plain dimension names (they are unique across the four sources); the source is in
``metadata["source"]`` and in the item id, ``<source>:<conversation id>``, which is also the
cluster.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attune_judge.data._records import ChatMessage, JudgeItem, Rating
from attune_judge.data.adapters._result import (
    AdapterReport,
    AdapterResult,
    messages_to_item,
    parse_number,
    parse_transcript,
    require_dir,
    value_ranges,
)
from attune_judge.errors import UserError

__all__ = ["EC_RATERS", "EC_SOURCES", "EcSource", "convert_empathic_communication"]


@dataclass(frozen=True)
class EcSource:
    """One of the four source corpora and its rating dimensions."""

    name: str
    id_column: str
    """The id column of the per-rater files (they differ between sources)."""
    combined_id_column: str
    """The id column of this source's block in the combined CSV."""
    dimensions: tuple[str, ...]
    scale: tuple[float, float]
    """Declared scale of every dimension of this source (min, max)."""
    text_public: bool


EC_SOURCES: dict[str, EcSource] = {
    s.name: s
    for s in (
        EcSource(
            "empatheticdialogues",
            "conv_id",
            "empathetic_conversation_id",
            ("empathy", "relevance", "fluency"),
            (1, 5),
            True,
        ),
        EcSource(
            "epitome",
            "sp_id",
            "epitome_conversation_id",
            ("level_emotional_reactions", "level_interpretations", "level_explorations"),
            (0, 2),
            True,
        ),
        EcSource(
            "perceived_empathy",
            "id",
            "perceived_conversation_id",
            (
                "m_understood",
                "m_validated",
                "m_affirmed",
                "m_seen",
                "m_accepted",
                "m_caredfor",
                "m_emotional",
                "m_practical",
                "m_motivation",
            ),
            (1, 7),
            False,
        ),
        EcSource(
            "lend_an_ear",
            "conversation_id",
            "lend_an_ear_conversation_id",
            (
                "validating_emotions",
                "encouraging_elaboration",
                "demonstrating_understanding",
                "advice_giving",
                "self_oriented",
                "dismissing_emotions",
            ),
            (1, 5),
            True,
        ),
    )
}

EC_RATERS: dict[str, tuple[str, str]] = {
    "expert1": ("experts", "expert 1"),
    "expert2": ("experts", "expert 2"),
    "expert3": ("experts", "expert 3"),
    "crowd": ("crowd", "crowd workers (mean of several per conversation)"),
    "gpt": ("llm", "GPT-4o"),
    "claude": ("llm", "Claude 3.7 Sonnet"),
    "gemini": ("llm", "Gemini 2.5 Pro"),
}
"""Rater file prefix -> (rater group, who it is)."""

_COMBINED = "annotations/combined_annotations_across_methods_and_datasets.csv"
# annotation_method values of the combined CSV -> our rater names ("llm" is Gemini: checked
# value by value against gemini_ratings.csv; "experts" is the median of the three experts).
_COMBINED_METHODS = {
    "expert1": "expert1",
    "expert2": "expert2",
    "expert3": "expert3",
    "crowd": "crowd",
    "gpt": "gpt",
    "claude": "claude",
    "llm": "gemini",
}
# Perceived Empathy seekers' own ratings (original_data/perceived_empathy_self_ratings.csv)
_SELF_COLUMNS = ("understood", "validated", "affirmed", "seen", "accepted", "caredfor")


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise UserError(f"{path}: empty CSV file")
    return rows[0], [r for r in rows[1:] if any(c.strip() for c in r)]


def _item_id(source: str, conv_id: str) -> str:
    return f"{source}:{conv_id}"


def _rater_file(
    src: Path, source: EcSource, rater: str, report: AdapterReport
) -> dict[str, dict[str, float | None]]:
    """conv id -> dimension -> value, for one rater file (header names, not positions)."""
    path = src / "annotations" / source.name / f"{rater}_ratings.csv"
    header, rows = _read_csv(path)
    where = f"{path.relative_to(src)}"
    if source.id_column not in header:
        raise UserError(f"{path}: no id column {source.id_column!r} (header: {header})")
    missing = [d for d in source.dimensions if d not in header]
    if missing:
        raise UserError(f"{path}: missing dimension columns {missing}")
    if header[0] in ("", "Unnamed: 0"):
        report.notes.append(f"{where}: leading unnamed index column ignored")
    col = {name: header.index(name) for name in (source.id_column, *source.dimensions)}
    out: dict[str, dict[str, float | None]] = {}
    for line, row in enumerate(rows, start=2):
        conv_id = row[col[source.id_column]].strip()
        if conv_id in out:
            raise UserError(f"{path}: row {line}: duplicate id {conv_id!r}")
        try:
            out[conv_id] = {d: parse_number(row[col[d]]) for d in source.dimensions}
        except (ValueError, IndexError) as exc:
            raise UserError(f"{path}: row {line}: {exc}") from None
    return out


def _self_ratings(
    src: Path, ids: set[str], report: AdapterReport
) -> dict[str, dict[str, float | None]]:
    """Perceived Empathy seekers' own ratings of the 50 sampled conversations."""
    path = src / "original_data" / "perceived_empathy_self_ratings.csv"
    if not path.exists():
        report.notes.append(f"{path.name} not found: no seeker self-ratings")
        return {}
    header, rows = _read_csv(path)
    col = {name: header.index(name) for name in ("id", *_SELF_COLUMNS)}
    out = {}
    for row in rows:
        if row[col["id"]] in ids:
            out[row[col["id"]]] = {c: parse_number(row[col[c]]) for c in _SELF_COLUMNS}
    report.counts["perceived_empathy_self_rating_rows"] = len(rows)
    report.unmatched["perceived_empathy ids without seeker self-rating"] = sorted(ids - set(out))
    return out


def _transcript(path: Path, conv: str, text: str) -> list[ChatMessage]:
    try:
        return parse_transcript(text)
    except ValueError as exc:
        raise UserError(f"{path}: conversation {conv}: full_conversation: {exc}") from None


def _items(src: Path, report: AdapterReport) -> dict[str, JudgeItem]:
    """Conversation texts that are public, as conversation-level items."""
    items: dict[str, JudgeItem] = {}
    od = src / "original_data"

    _, ed_rows = _read_csv(od / "sample_empatheticdialogues.csv")
    header, _ = _read_csv(od / "sample_empatheticdialogues.csv")
    c = {n: header.index(n) for n in ("conv_id", "context", "prompt", "full_conversation")}
    for row in ed_rows:
        conv = row[c["conv_id"]]
        if _item_id("empatheticdialogues", conv) in items:
            continue  # one row per utterance; full_conversation repeats the whole dialogue
        text = row[c["full_conversation"]].replace("_comma_", ",")
        meta = {
            "source": "empatheticdialogues",
            "emotion": row[c["context"]],
            "situation": row[c["prompt"]].replace("_comma_", ","),
        }
        iid = _item_id("empatheticdialogues", conv)
        msgs = _transcript(od / "sample_empatheticdialogues.csv", conv, text)
        items[iid] = messages_to_item(iid, iid, msgs, "human-supporter", meta)
    report.notes.append("empatheticdialogues: '_comma_' replaced by ',' in texts")

    header, rows = _read_csv(od / "sample_epitome.csv")
    c = {n: header.index(n) for n in ("sp_id", "rp_id", "seeker_post", "response_post")}
    for row in rows:
        iid = _item_id("epitome", row[c["sp_id"]])
        items[iid] = JudgeItem(
            item_id=iid,
            conversation_id=iid,
            turn=1,
            context=[ChatMessage(role="user", content=row[c["seeker_post"]].strip())],
            candidate=row[c["response_post"]].strip(),
            candidate_model="human-supporter",
            metadata={"source": "epitome", "rp_id": row[c["rp_id"]], "scope": "conversation"},
        )

    header, rows = _read_csv(od / "sample_lend_an_ear_conversations.csv")
    c = {n: header.index(n) for n in ("conversation_id", "full_conversation")}
    for row in rows:
        iid = _item_id("lend_an_ear", row[c["conversation_id"]])
        where = od / "sample_lend_an_ear_conversations.csv"
        msgs = _transcript(where, row[c["conversation_id"]], row[c["full_conversation"]])
        items[iid] = messages_to_item(
            iid, iid, msgs, "human-supporter", {"source": "lend_an_ear", "seeker": "simulated"}
        )
    report.notes.append(
        "perceived_empathy: conversation texts are not public (ratings only, no items)"
    )
    return items


def _cross_check(
    src: Path, table: dict[tuple[str, str, str, str], float | None], report: AdapterReport
) -> None:
    """Compare the combined CSV (repeated column names, 4 side-by-side blocks) with the files."""
    path = src / _COMBINED
    if not path.exists():
        report.notes.append(f"{_COMBINED} not found: no cross-check")
        return
    header, rows = _read_csv(path)
    mismatches: list[str] = []
    checked = median_checked = 0
    for source in EC_SOURCES.values():
        start = header.index(source.combined_id_column)
        method_col = header.index("annotation_method", start)
        dim_col = {d: header.index(d, start) for d in source.dimensions}
        for row in rows:
            method, conv = row[method_col], row[start]
            for d, ci in dim_col.items():
                value = parse_number(row[ci])
                if method == "experts":
                    experts = [
                        table.get((source.name, e, conv, d))
                        for e in EC_RATERS
                        if e.startswith("expert")
                    ]
                    known = [v for v in experts if v is not None]
                    if value is None or len(known) != 3 or statistics.median(known) != value:
                        mismatches.append(f"{source.name} experts-median {conv} {d}")
                    median_checked += 1
                    continue
                rater = _COMBINED_METHODS.get(method)
                key = (source.name, rater or method, conv, d)
                if rater is None or key not in table:
                    mismatches.append(f"{source.name} {method} {conv} {d}: not in per-rater files")
                elif not _same(value, table[key]):
                    mismatches.append(f"{source.name} {method} {conv} {d}: {value} != {table[key]}")
                checked += 1
    report.counts["combined_values_checked"] = checked
    report.counts["combined_expert_medians_checked"] = median_checked
    report.unmatched["combined CSV values differing from per-rater files"] = mismatches
    report.notes.append(
        "combined CSV: annotation_method 'llm' is Gemini 2.5 Pro, 'experts' the median of the "
        "three experts (derived, not converted); used only as a cross-check"
    )


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9


def convert_empathic_communication(src_dir: Path) -> AdapterResult:
    """Convert the empathic-communication replication data.

    Parameters
    ----------
    src_dir
        The dataset folder (holding ``annotations/`` and ``original_data/``).

    Returns
    -------
    AdapterResult
        One ``Rating`` per rater x source x conversation x dimension (raters expert1-3 in group
        ``experts``, ``crowd``, ``gpt``/``claude``/``gemini`` in group ``llm``), the Perceived
        Empathy seekers' own ratings (rater ``seeker``, group ``participant``), and one
        conversation-level ``JudgeItem`` per conversation whose text is public.
    """
    src = require_dir(Path(src_dir), "annotations", "original_data")
    report = AdapterReport(dataset="empathic-communication", source=str(src))
    ratings: list[Rating] = []
    table: dict[tuple[str, str, str, str], float | None] = {}
    scales: dict[str, tuple[float, float]] = {}
    ids_by_source: dict[str, set[str]] = {}
    for source in EC_SOURCES.values():
        per_rater = {r: _rater_file(src, source, r, report) for r in EC_RATERS}
        all_ids = set().union(*(set(v) for v in per_rater.values()))
        ids_by_source[source.name] = all_ids
        for rater, rows in per_rater.items():
            report.unmatched[f"{source.name}: ids missing from {rater}"] = sorted(
                all_ids - set(rows)
            )
            group, _ = EC_RATERS[rater]
            for conv_id in sorted(rows):
                for dim in source.dimensions:
                    value = rows[conv_id][dim]
                    table[(source.name, rater, conv_id, dim)] = value
                    ratings.append(_rating(source, conv_id, rater, group, dim, value))
        for dim in source.dimensions:
            scales[dim] = source.scale
        report.counts[f"{source.name}_conversations"] = len(all_ids)

    pe = EC_SOURCES["perceived_empathy"]
    for conv_id, vals in sorted(_self_ratings(src, ids_by_source[pe.name], report).items()):
        for col, value in vals.items():
            ratings.append(_rating(pe, conv_id, "seeker", "participant", f"m_{col}", value))
            ratings[-1].metadata["original_column"] = col
    _cross_check(src, table, report)

    items = _items(src, report)
    item_sources = {i.metadata["source"] for i in items.values()}
    for name, ids in ids_by_source.items():
        if name not in item_sources:
            continue
        have = {i.removeprefix(name + ":") for i in items if i.startswith(name + ":")}
        report.unmatched[f"{name}: rated ids without text"] = sorted(ids - have)
        report.unmatched[f"{name}: texts without ratings"] = sorted(have - ids)

    ranges, outside = value_ranges(ratings, scales)
    report.value_ranges = ranges
    report.unmatched["values outside the declared scale"] = outside
    report.counts["ratings"] = len(ratings)
    report.counts["items"] = len(items)
    report.notes.append(
        "annotations/<source>/sample_ratings_crowdsourced.csv repeats crowd_ratings.csv (plus "
        "response_length in three sources): not converted again"
    )
    report.notes.append(
        "raters: "
        + "; ".join(f"{k} = {who} (group {g})" for k, (g, who) in EC_RATERS.items())
        + "; seeker = the Perceived Empathy support seeker's own rating (group participant)"
    )
    return AdapterResult(ratings=ratings, items=list(items.values()), report=report)


def _rating(
    source: EcSource,
    conv_id: str,
    rater: str,
    group: str,
    dim: str,
    value: float | None,
) -> Rating:
    iid = _item_id(source.name, conv_id)
    meta: dict[str, Any] = {
        "source": source.name,
        "scale_min": source.scale[0],
        "scale_max": source.scale[1],
    }
    return Rating(
        item_id=iid,
        rater=rater,
        rater_group=group,
        dimension=dim,
        value=value,
        cluster=iid,
        metadata=meta,
    )
