"""The ``sensitivity`` block of a sensitivity run's ``summary.json``: a
:class:`attune_judge.runs.SensitivityBlock` (``variants`` with ``tau``, ``stable``, ``verdict``
and ``leaderboard``; ``tau_matrix``; ``flips``; ``variance_components``), with the full
analysis under ``analysis``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attune_judge.calibration import SensitivityAnalysis, tau_b_rows
from attune_judge.runs import (
    Flip,
    SensitivityBlock,
    SensitivityVariant,
    StudySettings,
    TauMatrix,
    VarianceShare,
)
from attune_judge.sensitivity._resolve import Variant
from attune_judge.sensitivity._variants import BASE_VARIANT, VariantsFile

__all__ = ["sensitivity_block", "tau_matrix"]


def tau_matrix(analysis: SensitivityAnalysis) -> TauMatrix:
    """Kendall τ-b between the point-estimate rankings of every two variants."""
    labels = analysis.variants
    theta = []
    for name in labels:
        by_model = {m.model: m.score.estimate for m in analysis.ranking(name).models}
        theta.append([np.nan if by_model.get(m) is None else by_model[m] for m in analysis.models])
    T = np.asarray(theta, dtype=np.float64)
    matrix: list[list[float | None]] = []
    for a in range(len(labels)):
        row: list[float | None] = []
        for b in range(len(labels)):
            both = np.isfinite(T[a]) & np.isfinite(T[b])
            value = (
                float(tau_b_rows(T[a : a + 1, both], T[b : b + 1, both])[0])
                if both.sum() >= 2
                else float("nan")
            )
            row.append(value if np.isfinite(value) else None)
        matrix.append(row)
    return TauMatrix(labels=labels, matrix=matrix)


def sensitivity_block(
    spec: VariantsFile,
    variants: Sequence[Variant],
    judge_ids: Mapping[str, str],
    analysis: SensitivityAnalysis | None,
    *,
    design: Mapping[str, Mapping[str, str]] | None = None,
    notes: Sequence[str] = (),
) -> SensitivityBlock:
    """The typed ``sensitivity`` block of a sensitivity run (``design``: factor levels per
    variant)."""
    shared: dict[str, list[str]] = {}
    for v in variants:
        shared.setdefault(judge_ids[v.name], []).append(v.name)
    verdicts = {} if analysis is None else {v.variant: v for v in analysis.verdicts}
    out_variants: dict[str, SensitivityVariant] = {}
    for v in variants:
        entry: dict[str, Any] = {
            **v.describe(),
            "judge_id": judge_ids[v.name],
            "same_judge_as": [n for n in shared[judge_ids[v.name]] if n != v.name],
        }
        if design is not None:
            entry["factors"] = dict(design[v.name])
        if analysis is not None:
            ranking = analysis.ranking(v.name)
            entry.update(
                leaderboard=ranking.models, n_scores=ranking.n_scores, n_missing=ranking.n_missing
            )
            if ranking.tau is not None:
                entry["tau"] = ranking.tau
            verdict = verdicts.get(v.name)
            if verdict is not None:
                entry["stable"] = verdict.stable
                entry["verdict"] = {"unstable": "UNSTABLE"}.get(verdict.verdict, verdict.verdict)
                entry["reasons"] = list(verdict.reasons)
        out_variants[v.name] = SensitivityVariant(**entry)
    block = SensitivityBlock(
        kind="sensitivity",
        study=spec.name,
        description=spec.description,
        base=BASE_VARIANT,
        settings=StudySettings(**spec.analysis.model_dump()),
        notes=list(notes),
        variants=out_variants,
    )
    if analysis is None:
        return block
    block.rule = analysis.rule
    block.tau_matrix = tau_matrix(analysis)
    block.flips = [
        Flip(
            variant=p.variant,
            model_a=p.model_a,
            model_b=p.model_b,
            delta_base=p.base_diff,
            delta_variant=p.variant_diff,
            within_intervals=p.inside_intervals,
            significant=p.significant,
        )
        for p in analysis.flips
    ]
    if analysis.variance is not None:
        block.variance_components = [
            VarianceShare(component=c.source, variance=c.variance, share=c.share)
            for c in analysis.variance.components
        ]
    block.analysis = analysis
    return block
