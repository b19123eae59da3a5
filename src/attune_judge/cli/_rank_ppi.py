"""``rank RUN --human LABELS``: the judge's leaderboard corrected with human labels (PPI++).

Thin: read the judgments and the ratings, call :func:`attune_judge.calibration.ppi_columns` and
:func:`attune_judge.calibration.ppi_leaderboard`, render, and optionally write a run directory
with ``summary.json`` (kind ``ppi``) and the report.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from attune_judge._schema_version import SCHEMA_VERSION
from attune_judge.errors import UserError

__all__ = ["parse_scale", "ppi_rank"]


def parse_scale(text: str | None) -> tuple[float, float] | None:
    """``"1,5"`` → ``(1.0, 5.0)``; ``None`` stays ``None``."""
    if text is None:
        return None
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise UserError(f"--human-scale must be LOW,HIGH (e.g. 1,5), not {text!r}") from None
    if not hi > lo:
        raise UserError(f"--human-scale: HIGH must exceed LOW, not {text!r}")
    return lo, hi


def ppi_rank(
    judgments_path: Path,
    human_path: Path,
    *,
    judge_id: str | None,
    field: str,
    dimension: str | None,
    raters: list[str] | None,
    human_scale: tuple[float, float] | None,
    level: float,
    clip: bool,
    report_dir: Path | None,
) -> tuple[str, dict[str, Any]]:
    """The PPI++ leaderboard of a run's judgments against human ratings: (Markdown, data)."""
    from attune_judge import calibration as cal
    from attune_judge.data import Judgment, Rating, read_jsonl

    try:
        js = read_jsonl(judgments_path, Judgment, tolerate_torn_tail=True)
    except UserError as exc:
        raise UserError(
            f"{judgments_path}: --human needs Judgment records (a run directory): {exc}"
        ) from None
    ids = sorted({j.judge_id for j in js})
    if judge_id is None and len(ids) > 1:
        raise UserError(f"{judgments_path}: several judges {ids[:5]}; choose one with --judge-id")
    js = [j for j in js if judge_id is None or j.judge_id == judge_id]
    if not js:
        raise UserError(f"{judgments_path}: no judgments of judge {judge_id!r}")
    ratings = read_jsonl(human_path, Rating)
    if raters:
        ratings = [r for r in ratings if r.rater in raters]
        if not ratings:
            raise UserError(f"{human_path}: no rating by {', '.join(raters)} (--human-raters)")
    cols = cal.ppi_columns(
        js,
        ratings,
        field=field,  # type: ignore[arg-type]
        dimension=dimension,
        human_scale=human_scale,
    )
    if cols.n_matched == 0:
        raise UserError(
            f"{human_path}: no human-labelled item was scored by the judge "
            f"(human item ids such as {cols.unmatched_examples[:3]})"
        )
    board = cal.ppi_leaderboard(
        cols.models,
        cols.clusters,
        cols.judge,
        cols.human,
        level=level,
        clip=(0.0, 1.0) if clip else None,
    )
    text = cal.ppi_leaderboard_markdown(board)
    text += (
        f"\nHuman dimension `{cols.dimension}`: {cols.n_matched} of {cols.n_human_items} "
        "human-labelled items were scored by the judge"
        + (
            f" (not scored: {', '.join(cols.unmatched_examples)} ...)"
            if cols.unmatched_examples
            else ""
        )
        + ".\n"
    )
    data: dict[str, Any] = {
        **board.model_dump(mode="json"),
        "dimension": cols.dimension,
        "n_human_items": cols.n_human_items,
        "n_matched": cols.n_matched,
        "human_scale": list(human_scale) if human_scale else None,
        "field": field,
    }
    if report_dir is not None:
        _write_report(report_dir, data, judgments_path, human_path)
    return text, data


def _write_report(out: Path, data: dict[str, Any], source: Path, human: Path) -> None:
    import datetime as dt

    from attune_judge._version import __version__
    from attune_judge.report import write_report

    if out.exists() and not out.is_dir():
        raise UserError(f"{out}: --report must be a directory")
    if (out / "judgments.jsonl").exists():
        raise UserError(f"{out}: holds a scoring run; choose a new directory for --report")
    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "command": "rank",
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "arguments": {"source": str(source), "human": str(human)},
        "versions": {"attune-judge": __version__},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    summary = {"schema_version": SCHEMA_VERSION, "kind": "ppi", "ppi": data}
    (out / "summary.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    md, html = write_report(out)
    print(f"report: {md} and {html.name}", file=sys.stderr)
