"""Report section of an aligned judge (``summary.json`` key ``align``): the held-out proof."""

from __future__ import annotations

from attune_judge.report._blocks import Figure, KeyValues, Note, Section, Table
from attune_judge.report._fig_scores import forest_plot
from attune_judge.report._format import fmt_interval, fmt_num
from attune_judge.report._rundata import RunData
from attune_judge.runs import AlignSummary

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
    if not isinstance(run.record, AlignSummary):
        return []
    manifest, proof = run.record.align.manifest, run.record.align.proof
    split, calls = manifest.split, manifest.calls
    section = Section("Aligned judge: held-out proof", anchor="align")
    section.blocks.append(
        KeyValues(
            [
                ("labels", manifest.source),
                ("rubric", manifest.rubric.get("id", "—")),
                ("model", manifest.lm),
                ("optimizer", manifest.optimizer.name),
                ("metric", manifest.metric),
                (
                    "split (conversations)",
                    ", ".join(f"{k} {v}" for k, v in split.conversations.items())
                    + f"; seed {split.seed}",
                ),
                (
                    "model calls",
                    f"optimizer {calls.get('optimizer', '—')}, evaluation "
                    f"{calls.get('evaluation', '—')}",
                ),
                ("artifact hash", manifest.artifact_hash),
            ]
        )
    )
    if proof is None:
        return [section]
    rows, labels, est, lo, hi = [], [], [], [], []
    pairs = proof.inconsistent is not None
    target = "the people's choice" if pairs else "the people's scores exactly"
    for key, label in _ROWS:
        m = getattr(proof, key)
        if m is None:
            continue
        if key == "length_baseline":
            label = f"length only ({proof.length_rule})"
        rows.append([label, fmt_num(m.estimate), fmt_interval(m.lower, m.upper)])
        labels.append(label)
        est.append(m.estimate)
        lo.append(m.lower)
        hi.append(m.upper)
    for key, label in (
        ("improvement", "improvement (after − before)"),
        ("improvement_mapped", "improvement with the score map"),
    ):
        m = getattr(proof, key)
        if m is not None:
            rows.append([label, fmt_num(m.estimate), fmt_interval(m.lower, m.upper)])
    section.blocks.append(
        Table(
            ["judge", "agreement", "interval"],
            rows,
            "lrr",
            caption=(
                f"Mean per-item agreement with the people ({proof.metric}: 1 = "
                f"{target}) on {proof.n_items} held-out items in "
                f"{proof.n_clusters} conversations never shown to the optimizer; "
                "cluster-bootstrap intervals, the improvement paired per item. Failed "
                f"judgments (not scores): before {proof.n_failed_before}, after "
                f"{proof.n_failed_after}."
            ),
        )
    )
    if proof.inconsistent is not None:
        inc = proof.inconsistent
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
    if proof.verdict:
        kind = "info" if proof.distinguishable else "warning"
        section.blocks.append(Note(proof.verdict, kind))
    return [section]
