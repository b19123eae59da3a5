"""A run directory as one long table: ``load_run(RUN).to_pandas()`` and ``attune-judge export``.

One row per item × criterion × judge, from the run's current judgments (the last record of each
``(item_id, judge_id)``). A judgment with scores gives one row per criterion (``criterion``,
``value``); one without (a failure, a refusal, a pairwise ``inconsistent``) gives one row with
an empty criterion, so every judgment is in the table and ``status`` says what happened. A
jury's members appear as their own rows (``jury_id`` names the jury; their tokens and cost are
counted in the jury's rows only). Columns: see :data:`EXPORT_COLUMNS`.

The quantities of a whole judgment (:data:`JUDGMENT_QUANTITIES`: tokens, calls, cost, latency)
are on its first row only and empty on its other criterion rows, so a column's sum over the
table is the run's total (``summary.json``'s ``run.totals``), not a multiple of it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from attune_judge.data import JudgeSpec, Judgment, read_judgments
from attune_judge.errors import UserError
from attune_judge.runs import (
    CommandManifest,
    RunManifest,
    RunSummary,
    read_manifest,
    read_summary,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXPORT_COLUMNS",
    "JUDGMENT_QUANTITIES",
    "ExportFormat",
    "RunData",
    "export_run",
    "load_run",
]

ExportFormat = Literal["csv", "parquet", "jsonl", "inspect"]

JUDGMENT_QUANTITIES: tuple[str, ...] = (
    "prompt_tokens",
    "completion_tokens",
    "calls",
    "cost_usd",
    "latency_s",
)
"""Columns measured per judgment, not per criterion: filled on a judgment's first row only."""

EXPORT_COLUMNS: tuple[str, ...] = (
    "judge_id",
    "jury_id",
    "judge_model",
    "item_id",
    "conversation_id",
    "turn",
    "candidate_model",
    "criterion",
    "value",
    "overall",
    "normalized",
    "verdict",
    "status",
    "error",
    *JUDGMENT_QUANTITIES,
    "timestamp",
)
"""The long table's columns, in order."""


def _judge_model(spec: JudgeSpec) -> str | None:
    """The model string of a judge spec (``a + b`` for a jury, ``None`` for baselines)."""
    if spec.model_name() or spec.members is None:
        return spec.model_name()
    return " + ".join(m for m in map(_judge_model, spec.members) if m) or None


def _turn(j: Judgment) -> int | None:
    """The turn number from an item id ``<conversation>:<turn>:...`` (``None`` otherwise)."""
    if not j.conversation_id or not j.item_id.startswith(j.conversation_id + ":"):
        return None
    head = j.item_id[len(j.conversation_id) + 1 :].split(":", 1)[0]
    return int(head) if head.isdigit() else None


@dataclass
class RunData:
    """A run directory's manifest, summary and current judgments."""

    path: Path
    """The run directory."""
    manifest: RunManifest | CommandManifest | None
    """``manifest.json`` (``None`` when absent)."""
    summary: RunSummary | None
    """``summary.json`` (``None`` if the run has none yet)."""
    judgments: list[Judgment] = field(default_factory=list)
    """The last judgment of each (item, judge), in file order."""

    def judge_models(self) -> dict[str, str | None]:
        """Judge id → model string, from the manifest's judge specs (jury members too)."""
        out: dict[str, str | None] = {}
        judges = self.manifest.judges if isinstance(self.manifest, RunManifest) else {}
        for jid, spec in judges.items():
            out[jid] = _judge_model(spec)
            for member in spec.members or []:
                out.setdefault(member.judge_id(), _judge_model(member))
        return out

    def rows(self) -> Iterator[dict[str, Any]]:
        """The long table, one dict per row (keys :data:`EXPORT_COLUMNS`)."""
        models = self.judge_models()
        for j in self.judgments:
            common = {
                "item_id": j.item_id,
                "conversation_id": j.conversation_id,
                "turn": _turn(j),
                "candidate_model": j.candidate_model,
            }
            yield from _judgment_rows(
                j,
                common,
                judge_id=j.judge_id,
                jury_id=None,
                model=models.get(j.judge_id),
                cost={
                    "prompt_tokens": j.usage.prompt_tokens,
                    "completion_tokens": j.usage.completion_tokens,
                    "calls": j.usage.calls,
                    "cost_usd": j.cost,
                    "latency_s": j.latency_s,
                    "timestamp": j.timestamp,
                },
            )
            for member in j.details.get("members") or []:
                mj = Judgment(
                    item_id=j.item_id,
                    judge_id=str(member.get("judge_id")),
                    status=member.get("status", "ok"),
                    scores=member.get("scores") or {},
                    overall=member.get("overall"),
                    normalized=member.get("normalized"),
                    verdict=member.get("verdict"),
                    error=member.get("error"),
                )
                yield from _judgment_rows(
                    mj,
                    common,
                    judge_id=mj.judge_id,
                    jury_id=j.judge_id,
                    model=models.get(mj.judge_id) or member.get("model"),
                    cost={"timestamp": j.timestamp},
                )

    def to_pandas(self) -> pd.DataFrame:
        """The long table as a pandas ``DataFrame`` (columns :data:`EXPORT_COLUMNS`)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows()), columns=list(EXPORT_COLUMNS))


def _judgment_rows(
    j: Judgment,
    common: dict[str, Any],
    *,
    judge_id: str,
    jury_id: str | None,
    model: str | None,
    cost: dict[str, Any],
) -> Iterator[dict[str, Any]]:
    base = {
        **dict.fromkeys(EXPORT_COLUMNS),
        **common,
        **cost,
        "judge_id": judge_id,
        "jury_id": jury_id,
        "judge_model": model,
        "overall": j.overall,
        "normalized": j.normalized,
        "verdict": j.verdict,
        "status": j.status,
        "error": j.error,
    }
    if not j.scores:
        yield base
        return
    once = dict.fromkeys(JUDGMENT_QUANTITIES)  # later rows: the judgment's totals not again
    for n, (criterion, value) in enumerate(sorted(j.scores.items())):
        yield {**base, **(once if n else {}), "criterion": criterion, "value": value}


def load_run(path: str | Path) -> RunData:
    """Read a run directory (any command that writes ``judgments.jsonl``).

    Raises
    ------
    UserError
        Not a run directory (no ``judgments.jsonl``), or an unreadable manifest.
    """
    run = Path(path)
    log = run / "judgments.jsonl"
    if not run.is_dir():
        raise UserError(f"{run}: not a run directory (expected a folder with judgments.jsonl)")
    if not log.is_file():
        raise UserError(f"{run}: no judgments.jsonl; is this a run directory of score/bench?")
    return RunData(run, read_manifest(run), read_summary(run), read_judgments(log))


def export_run(path: str | Path, out: str | Path, fmt: ExportFormat = "csv") -> int:
    """Write the run's long table to ``out`` as CSV, Parquet or JSONL; return the row count.
    ``inspect``: an Inspect AI log instead (``.eval``/``.json``, one sample per judged item;
    see :mod:`attune_judge.runner._export_inspect`); return the sample count.

    The file is written beside ``out`` first and renamed into place (a failure leaves no
    half-written table).
    """
    data = load_run(path)
    target = Path(out)
    if target.is_dir():
        raise UserError(f"{target}: is a folder; give the output file name")
    if fmt == "inspect":
        from attune_judge.runner._export_inspect import write_inspect_log

        return write_inspect_log(data.path, data.manifest, data.summary, data.judgments, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    rows = list(data.rows())
    if fmt == "csv":
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(EXPORT_COLUMNS))
            writer.writeheader()
            writer.writerows(rows)
    elif fmt == "jsonl":
        with tmp.open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif fmt == "parquet":
        frame = data.to_pandas()
        frame.to_parquet(tmp, engine="pyarrow", index=False)
    else:
        raise UserError(f"--format must be csv, parquet, jsonl or inspect, not {fmt!r}")
    tmp.replace(target)
    return len(rows)
