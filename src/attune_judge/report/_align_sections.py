"""Report section of an aligned judge (``summary.json`` key ``align``): the held-out proof."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attune_judge.report._blocks import Figure, KeyValues, Note, Section, Table
from attune_judge.report._fig_scores import forest_plot
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData

__all__ = ["align_sections"]

_ROWS = (
    ("before", "unaligned judge"),
    ("after", "aligned judge"),
    ("after_mapped", "aligned judge + score map (cross-fitted)"),
    ("length_baseline", "length only"),
    ("position_baseline", "position only (A always wins)"),
    ("human_ceiling", "one person vs the others"),
)


def align_sections(run: RunData) -> list[Section]:
    """Settings, the held-out table and figure, the improvement and the verdict."""
    block: Mapping[str, Any] = run.summary.get("align") or {}
    manifest: Mapping[str, Any] = block.get("manifest") or {}
    proof: Mapping[str, Any] = block.get("proof") or {}
    opt: Mapping[str, Any] = manifest.get("optimizer") or {}
    split: Mapping[str, Any] = manifest.get("split") or {}
    section = Section("Aligned judge: held-out proof", anchor="align")
    calls = manifest.get("calls") or {}
    section.blocks.append(
        KeyValues(
            [
                ("labels", str(manifest.get("source", "—"))),
                ("rubric", str((manifest.get("rubric") or {}).get("id", "—"))),
                ("model", str(manifest.get("lm", "—"))),
                ("optimizer", str(opt.get("name", "—"))),
                ("metric", str(manifest.get("metric", "—"))),
                (
                    "split (conversations)",
                    ", ".join(f"{k} {v}" for k, v in (split.get("conversations") or {}).items())
                    + f"; seed {split.get('seed')}",
                ),
                (
                    "model calls",
                    f"optimizer {calls.get('optimizer', '—')}, evaluation "
                    f"{calls.get('evaluation', '—')}",
                ),
                ("artifact hash", str(manifest.get("artifact_hash", "—"))),
            ]
        )
    )
    rows, labels, est, lo, hi = [], [], [], [], []
    pairs = proof.get("inconsistent") is not None
    target = "the people's choice" if pairs else "the people's scores exactly"
    for key, label in _ROWS:
        m = proof.get(key)
        if not m:
            continue
        if key == "length_baseline":
            label = f"length only ({proof.get('length_rule') or 'fitted on train'})"
        rows.append(
            [label, fmt_num(m.get("estimate")), fmt_interval(m.get("lower"), m.get("upper"))]
        )
        labels.append(label)
        est.append(m.get("estimate"))
        lo.append(m.get("lower"))
        hi.append(m.get("upper"))
    for key, label in (
        ("improvement", "improvement (after − before)"),
        ("improvement_mapped", "improvement with the score map"),
    ):
        m = proof.get(key)
        if m:
            rows.append(
                [label, fmt_num(m.get("estimate")), fmt_interval(m.get("lower"), m.get("upper"))]
            )
    section.blocks.append(
        Table(
            ["judge", "agreement", "interval"],
            rows,
            "lrr",
            caption=(
                f"Mean per-item agreement with the people ({proof.get('metric', 'ordinal')}: 1 = "
                f"{target}) on {proof.get('n_items', '—')} held-out items in "
                f"{proof.get('n_clusters', '—')} conversations never shown to the optimizer; "
                "cluster-bootstrap intervals, the improvement paired per item. Failed "
                f"judgments (not scores): before {proof.get('n_failed_before', 0)}, after "
                f"{proof.get('n_failed_after', 0)}."
            ),
        )
    )
    if pairs:
        inc = proof["inconsistent"]
        section.blocks.append(
            Note(
                f"Pairs whose two orders gave opposite winners (position bias; counted as "
                f"disagreeing): before {inc.get('before')}, after {inc.get('after')}.",
                "info",
            )
        )
    if labels:
        section.blocks.append(
            Figure(
                "align-held-out",
                forest_plot(
                    labels,
                    est,
                    lo,
                    hi,
                    title="Agreement with the people on held-out conversations",
                    xlabel="mean per-item agreement (1 = identical to the people)",
                ),
                "Agreement before and after alignment, with baselines and the human ceiling",
            )
        )
    if proof.get("verdict"):
        kind = "info" if proof.get("distinguishable") else "warning"
        section.blocks.append(Note(str(proof["verdict"]), kind))
    return [section]
