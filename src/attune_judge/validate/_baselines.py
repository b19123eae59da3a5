"""Baselines beside a validation: the judge next to reply length and an empathy-word count.

On the items the judge scored, each of the set's dimensions and their total (each person's
mean over the dimensions, then the median over people) is compared with the people by
Spearman ρ, for the judge, the length-only baseline (:class:`attune_judge.judges.LengthJudge`)
and the lexicon baseline (:class:`attune_judge.judges.LexiconJudge`), with the judge's
difference to each baseline as a paired cluster-bootstrap interval. Judgments carrying score
distributions (``--score-mode expected``) also get a Brier score and calibration error
against the people's median level, where that median is a level of the scale.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from attune_judge._bootstrap import DEFAULT_B
from attune_judge.calibration import ProbabilityScores, baseline_agreement, probability_scores
from attune_judge.data import JudgeItem, Judgment, Rating
from attune_judge.judges import LengthJudge, LexiconJudge
from attune_judge.runs import BaselineDimension, BaselinesBlock

__all__ = ["baseline_comparison"]

TOTAL = "total"


def _human_scores(humans: Sequence[Rating]) -> dict[str, dict[str, float]]:
    """item -> dimension (and ``total``) -> the people's median."""
    by: dict[str, dict[str, dict[str, float]]] = {}
    for r in humans:
        if isinstance(r.value, int | float) and not isinstance(r.value, bool):
            by.setdefault(r.item_id, {}).setdefault(r.dimension, {})[r.rater] = float(r.value)
    out: dict[str, dict[str, float]] = {}
    for item, dims in by.items():
        row = {d: statistics.median(v.values()) for d, v in dims.items()}
        raters = sorted({rater for v in dims.values() for rater in v})
        per_rater = [
            statistics.mean(v[rater] for v in dims.values() if rater in v) for rater in raters
        ]
        row[TOTAL] = statistics.median(per_rater)
        out[item] = row
    return out


def baseline_comparison(
    items: Sequence[JudgeItem],
    judgments: Sequence[Judgment],
    humans: Sequence[Rating],
    *,
    B: int = DEFAULT_B,
    seed: int = 0,
    judge_name: str = "judge",
) -> tuple[list[str], list[str], BaselinesBlock]:
    """Terminal lines, Markdown lines and the typed block of the baseline comparison.

    Dimensions where fewer than three items have both a judge score and a human score are
    left out; the data record how many items each comparison used.
    """
    human = _human_scores(humans)
    ok = {j.item_id: j for j in judgments if j.status == "ok"}
    by_id = {i.item_id: i for i in items}
    length = {i: LengthJudge().judge(by_id[i]).overall for i in ok if i in by_id}
    lexicon = {i: LexiconJudge().judge(by_id[i]).overall for i in ok if i in by_id}
    dims = sorted({d for row in human.values() for d in row if d != TOTAL})
    data = BaselinesBlock(judge=judge_name)
    lines: list[str] = [f"baselines beside {judge_name} (Spearman ρ with the people):"]
    md = ["", "## Beside the no-model baselines", ""]
    md.append(
        "Spearman ρ with the people on the same items, for the judge, the reply's length in "
        "words and a count of empathic words (our lexicon); the judge's difference to each "
        "baseline has a paired cluster-bootstrap 95% interval."
    )
    md += ["", "| dimension | n | judge | length | lexicon | judge − length | judge − lexicon |"]
    md.append("|---|---|---|---|---|---|---|")
    for dim in [*dims, TOTAL]:
        ids = []
        judge_values = []
        for i in sorted(ok):
            if i not in by_id or dim not in human.get(i, {}):
                continue
            scores = ok[i].scores
            if dim == TOTAL:
                present = [scores[d] for d in dims if d in scores]
                if not present:
                    continue
                value = sum(present) / len(present)
            elif dim in scores:
                value = scores[dim]
            else:
                continue
            ids.append(i)
            judge_values.append(value)
        if len(ids) < 3:
            continue
        res = baseline_agreement(
            [human[i][dim] for i in ids],
            judge_values,
            {
                "length": [float(length[i] or 0.0) for i in ids],
                "lexicon": [float(lexicon[i] or 0.0) for i in ids],
            },
            clusters=[ok[i].conversation_id or i for i in ids],
            B=B,
            seed=seed,
        )
        entry = BaselineDimension(agreement=res)
        if dim != TOTAL:
            probs = _probabilities(ok, ids, dim, human)
            if probs is not None:
                entry.probability_scores = probs
        data.dimensions[dim] = entry
        cells = [
            _cell(res.spearman["judge"]),
            _cell(res.spearman["length"]),
            _cell(res.spearman["lexicon"]),
            _cell(res.difference["length"]),
            _cell(res.difference["lexicon"]),
        ]
        md.append(f"| {dim} | {res.n} | " + " | ".join(cells) + " |")
        lines.append(
            f"   {dim:28s} judge {cells[0]}; length {cells[1]}; lexicon {cells[2]}; "
            f"judge − length {cells[3]}; judge − lexicon {cells[4]}"
        )
    scored = {d: e.probability_scores for d, e in data.dimensions.items() if e.probability_scores}
    if scored:
        md += ["", "Probability outputs against the people's median level:", ""]
        md += ["| dimension | n | Brier | ECE |", "|---|---|---|---|"]
        for dim, p in scored.items():
            md.append(f"| {dim} | {p.n} | {p.brier:.3f} | {p.ece:.3f} |")
            lines.append(f"   {dim:28s} Brier {p.brier:.3f}; ECE {p.ece:.3f} (n={p.n})")
    return lines, md, data


def _probabilities(
    ok: dict[str, Judgment], ids: list[str], dim: str, human: dict[str, dict[str, float]]
) -> ProbabilityScores | None:
    # a calibrated judge's scores come from its head's distributions (details["calibrated"]):
    # Brier and ECE must score those, not the raw ones it was fitted on
    dists = [_distribution(ok[i], dim) for i in ids]
    if not any(dists):
        return None
    levels = sorted({int(k) for d in dists if d for k in d["probabilities"]})
    res = probability_scores(
        [d["probabilities"] if d else None for d in dists],
        [human[i][dim] for i in ids],
        levels,
    )
    if res.n == 0:
        return None
    return res


def _distribution(j: Judgment, dim: str) -> dict[str, Any] | None:
    """The distribution behind the judgment's score of ``dim``: the calibrated one when the
    judge is calibrated, else the model's raw one (``{"probabilities": {level: p}}``)."""
    cal = j.details.get("calibrated")
    if isinstance(cal, dict) and isinstance(cal.get(dim), dict):
        return {"probabilities": cal[dim]}
    d = j.details.get("distributions", {}).get(dim)
    return d if isinstance(d, dict) else None


def _cell(metric: Any) -> str:
    if metric.estimate is None:
        return "—"
    if metric.lower is None or metric.upper is None:
        return f"{metric.estimate:+.2f}"
    return f"{metric.estimate:+.2f} [{metric.lower:+.2f}, {metric.upper:+.2f}]"
