"""``calibrate`` on pairwise preferences: a judge's verdicts against people's choices.

Agreement (overall, κ, per question, excluding ties, the no-judge baselines), the judge's
length effect when both texts are known, and its position bias when pairs were judged in
both orders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attune_judge import calibration as cal
from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.data import Preference, read_jsonl, read_judgments
from attune_judge.errors import UserError
from attune_judge.runs import CalibrationBlock, Confusion
from attune_judge.validate._files import read_labels, record_kind

__all__ = ["calibrate_preferences", "preference_block"]


def _length_effect(judge: list[Any]) -> Any:
    """Length effect of the judge's verdicts when both texts are known (else ``None``)."""
    rows = [p for p in judge if p.text_a is not None and p.text_b is not None and p.winner]
    try:
        return cal.length_effect(
            [p.winner for p in rows],
            [len(p.text_a) for p in rows],
            [len(p.text_b) for p in rows],
            [p.cluster or p.item_id for p in rows],
        )
    except UserError:
        return None


def _length_effects(
    human: list[Preference], judge: list[Any], *, B: int, seed: int, level: float
) -> Any:
    """People's and the judge's length effects on the same pairs (both texts known; people's
    choices averaged per pair when several people chose), else ``None``."""
    jw = {p.item_id: p.winner for p in judge if p.winner is not None}
    rows = [
        p
        for p in human
        if p.text_a is not None and p.text_b is not None and p.winner and p.item_id in jw
    ]
    try:
        return cal.compare_length_effects(
            [p.winner for p in rows],  # type: ignore[misc]
            [jw[p.item_id] for p in rows],
            [len(p.text_a or "") for p in rows],
            [len(p.text_b or "") for p in rows],
            [p.cluster or p.item_id for p in rows],
            B=B,
            seed=seed,
            level=level,
        )
    except UserError:
        return None


def _judge_preferences(
    human: list[Preference], judge_path: Path, *, margin: float, B: int, seed: int
) -> tuple[list[Preference], str, Any]:
    """The judge's preferences from ``judge_path``, a note on how they were read, and the
    position bias (``None`` unless pairs were judged in both orders)."""
    kind = record_kind(judge_path)
    if kind == "preference":
        return read_jsonl(judge_path, Preference), "", None
    if kind != "judgment":
        raise UserError(f"{judge_path}: expected Preference or Judgment records, found {kind}")
    js = [j for j in read_judgments(judge_path) if j.status == "ok"]
    if any(j.verdict is not None for j in js):
        judge, n_inconsistent = cal.judgments_to_preferences(js, human)
        note = f"\n{n_inconsistent} inconsistent verdicts (opposite winners) counted as ties.\n"
        ab, ba, cl = cal.judgments_both_orders(js)
        bias = cal.position_bias(ab, ba, cl, B=B, seed=seed) if ab else None
        return judge, note, bias
    scores: dict[str, float] = {}
    for j in js:
        val = j.normalized if j.normalized is not None else j.overall
        if val is not None:
            scores[j.item_id] = float(val)
    judge = cal.judge_preferences_from_scores(human, scores, margin=margin)
    return judge, f"\nJudge verdicts from scores with tie margin {margin}.\n", None


def calibrate_preferences(
    human_path: Path,
    judge_path: Path,
    *,
    tie_policy: str = "strict",
    margin: float = 0.0,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> tuple[str, dict[str, Any], CalibrationBlock]:
    """A judge's pairwise verdicts against people's: (Markdown, JSON data, summary block).

    ``judge_path`` holds Preference records, or Judgment records with verdicts (pairwise
    judges; both orders give the position bias) or with scores (verdicts from the score
    difference, ``|Δ| <= margin`` a tie).
    """
    human = read_labels(human_path, Preference)
    judge, note, bias = _judge_preferences(human, judge_path, margin=margin, B=B, seed=seed)
    res = cal.preference_agreement(
        human,
        judge,
        tie_policy=tie_policy,  # type: ignore[arg-type]
        B=B,
        seed=seed,
        level=level,
    )
    comparison = cal.compare_preferences(human, judge, B=B, seed=seed, level=level)
    text = (
        cal.preference_markdown(res) + note + "\n" + cal.preference_comparison_markdown(comparison)
    )
    data: dict[str, Any] = {"agreement": res.model_dump(), "comparison": comparison.model_dump()}
    length = _length_effect(judge)
    if length is not None:
        text += (
            f"\nLength effect of the judge (OLS, cluster-robust): P(A preferred) changes by "
            f"{length.slope:+.3f} [{length.slope_lower:+.3f}, {length.slope_upper:+.3f}] "
            f"{length.unit} of length difference (n={length.n}).\n"
        )
        data["length_effect"] = length.model_dump()
    both = _length_effects(human, judge, B=B, seed=seed, level=level)
    if both is not None:
        fm = cal.fmt_metric
        text += (
            f"\nLength effects on the same {both.n} pairs ({both.n_clusters} clusters; change in "
            "P(A chosen) per 100 characters of length difference, OLS, paired cluster "
            f"bootstrap): people {fm(both.people)}, judge {fm(both.judge)}, judge − people "
            f"{fm(both.difference)}, judge / people {fm(both.ratio)}.\n"
        )
        data["length_effects"] = both.model_dump()
    if bias is not None:
        text += (
            f"\nPosition bias ({bias.n_pairs} pairs judged in both orders): flip rate "
            f"{cal.fmt_metric(bias.flip_rate)}, first-position win rate "
            f"{cal.fmt_metric(bias.first_position_win_rate)}\n"
        )
        data["position_bias"] = bias.model_dump()
    block = preference_block(human, judge, res, comparison)
    if both is not None:
        metrics = dict(block.metrics or {})
        for m in (both.people, both.judge, both.difference, both.ratio):
            metrics[m.name] = m
        block.metrics = metrics
    return text, data, block


def preference_block(
    human: list[Any], judge: list[Any], res: Any, comparison: Any
) -> CalibrationBlock:
    """The ``calibration`` block of ``summary.json`` for pairwise preferences: the agreement
    metrics (overall, κ, per question, accuracy excluding ties, the no-judge baselines), the
    join, and the confusion counts of the choices."""
    metrics: dict[str, cal.Metric] = {"agreement (overall)": res.overall}
    if res.kappa is not None:
        metrics["Cohen's κ (A / B / tie)"] = res.kappa
    for row in comparison.rows:
        who = "judge" if row.rater == "judge" else f"{row.rater} baseline"
        if row.excluding_ties is not None:
            metrics[f"{who}: accuracy excluding ties"] = row.excluding_ties
        if row.rater != "judge":
            metrics[f"{who}: agreement (A / B / tie)"] = row.three_class
            if row.kappa is not None:
                metrics[f"{who}: Cohen's κ"] = row.kappa
    for q, m in sorted(res.per_question.items()):
        metrics[f"agreement: {q}"] = m
    part = CalibrationBlock(metrics=metrics, join=res.join, warnings=res.warnings)
    jwin = {p.item_id: p.winner for p in judge if p.winner is not None}
    pairs = [(p.winner, jwin[p.item_id]) for p in human if p.winner and p.item_id in jwin]
    if pairs:
        cats = [c for c in ("A", "B", "tie") if any(c in pair for pair in pairs)]
        part.confusion = Confusion(
            categories=cats,
            counts=[[sum(p == (h, j) for p in pairs) for j in cats] for h in cats],
            human_label="participants' choice",
            judge_label="judge's verdict",
        )
    return part
