"""The live agreement page's numbers, computed by the calibration layer.

Among annotators: Krippendorff's α per dimension (ordinal for ratings, nominal for
behaviour answers and pair choices) with its cluster-bootstrap interval
(:func:`attune_judge.calibration.krippendorff_alpha`). With a judge run: ``calibrate``'s own
report of the judge against the exported labels (:func:`attune_judge.validate.calibrate_files`:
judge vs the humans, α with and without the judge, the human ceiling, the alternative annotator
test, each with its interval), as the report's own tables built from the typed result.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from attune_judge import calibration as cal
from attune_judge._bootstrap import DEFAULT_B
from attune_judge.annotate._export import export_records
from attune_judge.annotate._store import LabelStore
from attune_judge.data import Preference, Rating, write_jsonl
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric

__all__ = ["agreement", "annotator_alpha"]


def _as_ratings(records: list[Rating] | list[Preference]) -> list[Rating]:
    out: list[Rating] = []
    for r in records:
        if isinstance(r, Preference):
            out.append(
                Rating(
                    item_id=r.item_id,
                    rater=r.rater,
                    dimension=f"choice:{r.question}",
                    value=r.winner,
                    cluster=r.cluster,
                )
            )
        else:
            out.append(r)
    return out


def annotator_alpha(
    records: list[Rating] | list[Preference], *, B: int = DEFAULT_B, seed: int = 0
) -> list[dict[str, Any]]:
    """α among the annotators per dimension, with its interval (``None`` when not computable)."""
    ratings = _as_ratings(records)
    rows = []
    for dim in sorted({r.dimension for r in ratings}):
        table = cal.ratings_to_table([r for r in ratings if r.dimension == dim], dim)
        pairable = sum(1 for row in table.values if sum(v is not None for v in row) >= 2)
        measurement = "ordinal" if table.numeric else "nominal"
        metric = None
        if len(table.raters) >= 2 and pairable >= 2:
            metric = cal.krippendorff_alpha(table, measurement, B=B, seed=seed)  # type: ignore[arg-type]
        rows.append(
            {
                "dimension": dim,
                "items": pairable,
                "annotators": len(table.raters),
                "level": measurement,
                "alpha": metric.estimate if metric else None,
                "low": metric.lower if metric else None,
                "high": metric.upper if metric else None,
                "clusters": metric.n_clusters if metric else 0,
            }
        )
    return rows


def _block_json(block: Any) -> dict[str, Any] | None:
    from attune_judge.report import KeyValues, Note, Paragraph, Table

    if isinstance(block, Table):
        return {
            "kind": "table",
            "columns": list(block.columns),
            "rows": [list(r) for r in block.rows],
            "caption": block.caption,
        }
    if isinstance(block, KeyValues):
        return {"kind": "facts", "items": [list(kv) for kv in block.items]}
    if isinstance(block, Note):
        return {"kind": "note", "text": block.text, "level": block.kind}
    if isinstance(block, Paragraph):
        return {"kind": "text", "text": block.text}
    return None  # figures: the run's report has them


def sections_json(sections: list[Any]) -> list[dict[str, Any]]:
    """Report sections (tables, facts, notes; no figures) as JSON the page renders as text."""
    return [
        {
            "title": sec.title,
            "blocks": [b for b in map(_block_json, sec.blocks) if b is not None],
            "sections": sections_json(sec.subsections),
        }
        for sec in sections
    ]


def agreement(
    store: LabelStore, task: str, rubric: Rubric, judge: Path | None = None, *, B: int = DEFAULT_B
) -> dict[str, Any]:
    """The agreement page's data: ``dimensions`` (α among annotators), ``judge`` (``calibrate``'s
    report of the judge against the annotators, as sections of tables built from its typed
    result, when a judge run was given), ``judge_text`` (the text of a preference or behaviour
    comparison), ``judge_error`` (why there is no comparison yet) and ``notes`` (the
    few-conversation warning among them)."""
    records = export_records(store, task, rubric)
    notes: list[str] = []
    out: dict[str, Any] = {"dimensions": [], "judge": None, "judge_text": None, "judge_error": None}
    if not records:
        return {**out, "notes": ["No labels yet."]}
    dims = annotator_alpha(records, B=B)
    few = cal.few_clusters_warning(len({r.cluster or r.item_id for r in records}))
    if few:
        notes.append(few[0].upper() + few[1:] + ".")
    if not any(d["alpha"] is not None for d in dims):
        notes.append("α needs two annotators on at least two items.")
    elif any(d["alpha"] is not None and d["low"] is None for d in dims):
        notes.append("Some intervals are missing: too few conversations labelled twice so far.")
    out["dimensions"] = dims
    if judge is not None:
        from attune_judge.report import calibration_report_sections
        from attune_judge.validate import calibrate_files

        with tempfile.TemporaryDirectory(prefix="attune-annotate-") as tmp:
            human = Path(tmp) / "labels.jsonl"
            write_jsonl(human, records)
            try:
                outcome = calibrate_files(human, judge, B=B)
            except UserError as exc:
                out["judge_error"] = f"Not computable yet: {exc}"
            else:
                extra = ("baselines", "label_weighting", "fitted_check")
                for note in (outcome.data.get("label_weighting"), outcome.data.get("fitted_check")):
                    if note:  # calibrate's statements beside its report (the leakage check's too)
                        notes.append(str(note["message"] if isinstance(note, dict) else note))
                try:
                    report = cal.CalibrationReport.model_validate(
                        {k: v for k, v in outcome.data.items() if k not in extra}
                    )
                except ValueError:  # preferences or behaviours: their own result
                    out["judge_text"] = outcome.markdown
                else:
                    out["judge"] = sections_json(calibration_report_sections(report))
    return {**out, "notes": notes}
