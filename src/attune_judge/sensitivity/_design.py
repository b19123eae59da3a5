"""From a sensitivity run's judgments to the analysis inputs: tidy score tables, the design
factors of each variant and the variance decomposition over unique judges."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from attune_judge.calibration import VarianceDecomposition
from attune_judge.data import JudgeItem, Judgment
from attune_judge.sensitivity._resolve import Variant
from attune_judge.sensitivity._table import CriterionTable, ScoreTable
from attune_judge.sensitivity._variance import variance_decomposition
from attune_judge.sensitivity._variants import BASE_VARIANT, VariantsFile

__all__ = ["decompose_variance", "design_factors", "judgment_tables"]


def judgment_tables(
    variants: Sequence[Variant],
    judge_ids: dict[str, str],
    items: Sequence[JudgeItem],
    judgments: dict[tuple[str, str], Judgment],
) -> tuple[ScoreTable, CriterionTable]:
    """Tidy tables of normalised overall and per-criterion scores, one row per variant × item.

    A missing or non-``ok`` judgment is a NaN overall score (and no criterion rows). Criterion
    scores are mapped to [0, 1] by the variant's own scale.
    """
    cols: dict[str, list[Any]] = {k: [] for k in ("variant", "model", "conv", "turn", "score")}
    ccols: dict[str, list[Any]] = {k: [] for k in ("variant", "model", "conv", "crit", "score")}
    for v in variants:
        jid = judge_ids[v.name]
        for item in items:
            j = judgments.get((item.item_id, jid))
            ok = j is not None and j.status == "ok" and j.normalized is not None
            value = math.nan
            if j is not None and ok and j.normalized is not None:
                value = float(j.normalized)
            cols["variant"].append(v.name)
            cols["model"].append(item.candidate_model)
            cols["conv"].append(item.conversation_id)
            cols["turn"].append(item.turn if item.turn is not None else item.item_id)
            cols["score"].append(value)
            if j is None or not ok:
                continue
            for cid, raw in j.scores.items():
                scale = v.rubric.scale_of(cid)
                ccols["variant"].append(v.name)
                ccols["model"].append(item.candidate_model)
                ccols["conv"].append(item.conversation_id)
                ccols["crit"].append(cid)
                ccols["score"].append((raw - scale.min) / (scale.max - scale.min))
    return (
        ScoreTable.from_columns(
            cols["variant"], cols["model"], cols["conv"], cols["turn"], cols["score"]
        ),
        CriterionTable.from_columns(
            ccols["variant"], ccols["model"], ccols["conv"], ccols["crit"], ccols["score"]
        ),
    )


def design_factors(spec: VariantsFile, variants: Sequence[Variant]) -> dict[str, dict[str, str]]:
    """Variant → factor levels of the variance decomposition (besides model and conversation).

    ``judge`` is the judge model. Rubric/prompt changes are one ``variant`` factor (the
    perturbations applied, joined with ``+``), except in a full-factorial file, where each
    declared factor that is not a judge-model factor is its own factor (named after it in lower
    case, other characters replaced by ``_``) and interactions are pooled into the residual.
    """
    rubric_factors = [
        f
        for f in (spec.factors if spec.full_factorial else [])
        if {spec.perturbation(level).kind for level in f.levels} != {"judge_model"}
    ]
    names: dict[str, str] = {}
    for f in rubric_factors:
        name = re.sub(r"[^a-z_]", "_", f.name.lower())
        if not name[:1].isalpha() or name in ("model", "conversation", "judge", *names.values()):
            name = f"f_{name}"
        names[f.name] = name
    out: dict[str, dict[str, str]] = {}
    for v in variants:
        levels = {"judge": v.judge_label}
        if rubric_factors:
            for f in rubric_factors:
                hit = [p for p in v.perturbations if p in f.levels]
                levels[names[f.name]] = hit[0] if hit else BASE_VARIANT
        else:
            levels["variant"] = v.rubric_condition
        out[v.name] = levels
    return out


def decompose_variance(
    scores: ScoreTable,
    variants: Sequence[Variant],
    judge_ids: dict[str, str],
    design: dict[str, dict[str, str]],
    method: str,
) -> tuple[VarianceDecomposition | None, str | None]:
    """Variance decomposition over unique judges (a judge shared by variants counts once)."""
    seen: set[str] = set()
    keep: set[str] = set()
    for v in variants:
        if judge_ids[v.name] not in seen:
            seen.add(judge_ids[v.name])
            keep.add(v.name)
    rows = [i for i, name in enumerate(scores.variant.tolist()) if name in keep]
    names = [str(n) for n in scores.variant[rows]]
    factors: dict[str, list[str]] = {
        "model": scores.model[rows].tolist(),
        "conversation": scores.conversation[rows].tolist(),
    }
    for factor in design[variants[0].name]:
        factors[factor] = [design[n][factor] for n in names]
    try:
        return (
            variance_decomposition(scores.score[rows], factors, method=method),  # type: ignore[arg-type]
            None,
        )
    except (ValueError, np.linalg.LinAlgError) as exc:  # degenerate data: report, do not crash
        return None, f"variance decomposition not computed: {exc}"
