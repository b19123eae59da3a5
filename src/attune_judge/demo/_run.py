"""``attune-judge demo``: the validate-a-judge job on real, shipped data, offline.

Writes a run directory with ``report.md`` and ``report.html`` (every part's tables and figures,
with the demo's explanations; figures also in ``figures/``), ``calibration-<source>.md`` (the
full calibration reports of part a), ``c-local-judge/`` (part c's ``validate`` run) and
``summary.json`` (every number, machine-readable).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import calibration_markdown
from attune_judge.demo._duo import DuoResult, duo_analysis
from attune_judge.demo._report import demo_report
from attune_judge.demo._sensitivity import demo_sensitivity
from attune_judge.errors import UserError
from attune_judge.report import write_report
from attune_judge.runs import DemoSummary, JudgeRow, write_summary
from attune_judge.validate import (
    RecordedJudges,
    load_calibration_set,
    recorded_judges_vs_experts,
    validate_judge,
)
from attune_judge.validate._calibrated import held_out_items

__all__ = ["DemoRun", "load_calibration_set", "run_demo"]


class DemoRun(BaseModel):
    """What the demo produced."""

    run_dir: str
    """Where the report was written."""
    summary: list[str] = Field(default_factory=list)
    """Short summary lines for the terminal."""
    seconds: float = 0.0
    """Wall time."""
    report_md: str = ""
    """The report (Markdown)."""
    report_html: str = ""
    """The report (single-file HTML, figures embedded)."""


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return float(np.mean(vals)) if vals else None


def _summary_a(rows: Sequence[JudgeRow]) -> list[str]:
    out = ["a. recorded LLM judges vs 3 experts (empathic-communication, 21 dimensions):"]
    for judge in sorted({r.judge for r in rows}):
        mine = [r for r in rows if r.judge == judge]
        k = _mean([r.kappa_qw.estimate if r.kappa_qw else None for r in mine])
        kc = _mean([r.kappa_ceiling_humans for r in mine])
        kj = _mean([r.kappa_ceiling_judge for r in mine])
        passed = sum(bool(r.alt_test_passed) for r in mine)
        out.append(
            f"   {judge:7s} mean κ_qw vs expert median {k:.2f}; leave-one-out: judge {kj:.2f} "
            f"vs expert ceiling {kc:.2f}; alt-test passed on {passed}/{len(mine)} dimensions"
        )
    return out


def _summary_b(duo: DuoResult) -> list[str]:
    out = ["b. DUO (English): participant's own rating vs outside observers' median:"]
    if duo.observer_agreement:
        for d in duo.observer_agreement.dimensions:
            sp = d.judges[0].vs_humans.metrics.get("spearman")
            if sp and sp.estimate is not None:
                out.append(
                    f"   {d.dimension:21s} Spearman {sp.estimate:.2f} "
                    f"[{sp.lower:.2f}, {sp.upper:.2f}] (n={d.judges[0].vs_humans.n})"
                )
    for c in duo.comparisons:
        if c.cluster_by == "participant" and c.factor == "model":
            (name, diff), *_ = c.differences.items()
            if diff.estimate is not None and diff.lower is not None and diff.upper is not None:
                out.append(
                    f"   {c.dimension:21s} {name}: {diff.estimate:+.2f} "
                    f"[{diff.lower:+.2f}, {diff.upper:+.2f}] (clustered by participant)"
                )
    return out


def run_demo(
    out_dir: Path,
    *,
    B: int = DEFAULT_B,
    seed: int = 0,
    parts: Sequence[str] = ("a", "b", "c", "d"),
    calibration_root: Path | None = None,
    local_items: int = 6,
    local_lm: str = "local",
    local_judge: Any = None,
    sensitivity_conversations: int = 2,
    sensitivity_variants: Sequence[str] = ("shuffled",),
    sensitivity_lm_factory: Any = None,
) -> DemoRun:
    """Run the demo parts and write the run directory.

    Parameters
    ----------
    out_dir
        Run directory to create (or overwrite files in).
    B, seed
        Bootstrap replicates and seed for every interval.
    parts
        ``a`` (recorded judges vs experts), ``b`` (DUO observers, models and styles), ``c``
        (the embedded local judge on a few EPITOME conversations, against the same experts;
        with a shipped calibration head for ``local_lm``, the first of its held-out
        conversations, the calibrated row beside the raw one), ``d`` (a short
        rubric-sensitivity run of the local model on synthetic sample turns).
    calibration_root
        Where the calibration sets are (default: the shipped ones; parts a and b).
    local_items, local_lm, local_judge
        Part c: how many conversations, which model, or a ready judge object (tests).
    sensitivity_conversations, sensitivity_variants, sensitivity_lm_factory
        Part d (a short rubric-sensitivity run of ``local_lm`` on synthetic sample turns):
        how many conversations (one turn each), which variants of the shipped study besides
        the base, and a model factory replacing ``local_lm`` (tests).
    """
    unknown = sorted(set(parts) - {"a", "b", "c", "d"})
    if unknown:
        raise UserError(f"unknown demo part(s) {unknown}; available: a, b, c, d")
    start = time.monotonic()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary_json: dict[str, Any] = {}
    lines: list[str] = []
    if "a" in parts:
        ec = load_calibration_set("empathic-communication", calibration_root)
        rec: RecordedJudges = recorded_judges_vs_experts(ec, B=B, seed=seed)
        for source, report in rec.reports.items():
            (out / f"calibration-{source}.md").write_text(
                calibration_markdown(report), encoding="utf-8"
            )
        summary_json["recorded_judges"] = rec.rows
        lines += _summary_a(rec.rows)
    if "b" in parts:
        duo = duo_analysis(load_calibration_set("duo", calibration_root), B=B, seed=seed)
        summary_json["duo"] = duo
        lines += _summary_b(duo)
    if "c" in parts:
        # with a shipped calibration head for this model, its held-out conversations: validate
        # then shows the head's calibrated row beside the raw one on the same judgments
        val = validate_judge(
            "empathic-communication-epitome",
            local_lm,
            out / "c-local-judge",
            limit=local_items,
            only_items=held_out_items("empathic-communication-epitome", local_lm),
            B=B,
            seed=seed,
            judge=local_judge,
            quiet=False,  # the demo's slow part: progress (plain lines without a terminal)
        )
        summary_json["local_judge"] = val
        lines += ["c. " + val.summary[0], *val.summary[1:]]
    if "d" in parts:
        sens = demo_sensitivity(
            out,
            lm=local_lm,
            variants=sensitivity_variants,
            n_conversations=sensitivity_conversations,
            B=B,
            seed=seed,
            lm_factory=sensitivity_lm_factory,
        )
        summary_json["sensitivity"] = sens.block
        summary_json["sensitivity_notes"] = [sens.note()]
        lines += sens.summary
    write_summary(out, DemoSummary(parts=list(parts), B=B, seed=seed, **summary_json))
    seconds = time.monotonic() - start
    md, html = write_report(out, demo_report(out, seconds=seconds, local_lm=local_lm))
    return DemoRun(
        run_dir=str(out),
        summary=lines,
        seconds=time.monotonic() - start,
        report_md=str(md),
        report_html=str(html),
    )
