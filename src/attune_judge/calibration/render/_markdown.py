"""Markdown renderings of calibration results (strings only; callers decide where they go)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration._results import Metric
from attune_judge.calibration.agreement._binary import (
    BINARY_LABELS,
    BINARY_METRICS,
    BinaryAgreement,
)
from attune_judge.calibration.agreement._report import CalibrationReport, DimensionReport
from attune_judge.calibration.preference._preference import PreferenceAgreement
from attune_judge.calibration.ranking._leaderboard import Leaderboard
from attune_judge.calibration.resampling._bootstrap import (
    DEGENERATE,
    MAX_UNDEFINED_SHARE,
    SINGLE_CLUSTER,
)
from attune_judge.calibration.resampling._intervals import is_zero_width

__all__ = [
    "binary_markdown",
    "calibration_markdown",
    "fmt_estimate",
    "fmt_metric",
    "fmt_num",
    "leaderboard_markdown",
    "preference_markdown",
    "to_float",
]


MISSING = "—"
"""What a table shows for a value that does not exist (undefined, not computed)."""


def to_float(x: Any) -> float | None:
    """``x`` as a finite float, or ``None`` (for ``None``, NaN, infinities, non-numbers)."""
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fmt_num(x: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals (``0.712``); ``—`` when missing.

    >>> fmt_num(0.71249), fmt_num(None), fmt_num(float("nan")), fmt_num(-0.0001, 2)
    ('0.712', '—', '—', '0.00')
    """
    v = to_float(x)
    if v is None:
        return MISSING
    out = f"{v:.{digits}f}"
    # avoid "-0.00": a rounded zero has no sign
    return out[1:] if out.startswith("-") and float(out) == 0 else out


def fmt_estimate(
    value: float | None,
    lower: float | None,
    upper: float | None,
    digits: int = 3,
    degenerate: str = " (degenerate)",
) -> str:
    """``0.512 [0.401, 0.623]``, ``0.512`` without an interval, ``—`` without a value; a
    zero-width interval ends in ``degenerate``."""
    if value is None:
        return MISSING
    if lower is None or upper is None:
        return fmt_num(value, digits)
    out = f"{fmt_num(value, digits)} [{fmt_num(lower, digits)}, {fmt_num(upper, digits)}]"
    return out + degenerate if is_zero_width(lower, upper) else out


def fmt_metric(m: Metric | None, digits: int = 3) -> str:
    """``0.512 [0.401, 0.600]`` or ``undefined (reason)``, with interval caveats.

    Caveats are visible, not only in ``method``: a percentile interval where BCa was asked for
    but is undefined ends in ``(percentile: BCa undefined)``; dropped undefined replicates in
    ``(7% of replicates undefined)``; a withheld interval reads ``no interval (…)``; a
    zero-width interval ends in ``(degenerate: zero width)``.
    """
    if m is None:
        return MISSING
    if m.estimate is None:
        return f"undefined ({m.undefined_reason})" if m.undefined_reason else "undefined"
    share = m.n_undefined_replicates / m.B if m.B else 0.0
    if m.lower is None or m.upper is None:
        why = _no_interval_words(m, share)
        return fmt_num(m.estimate, digits) + (f" ({why})" if why else "")
    out = fmt_estimate(m.estimate, m.lower, m.upper, digits, degenerate="")
    caveats = ["degenerate: zero width"] if is_zero_width(m.lower, m.upper) else []
    if m.requested_method in ("bca", "studentized") and m.method == "percentile":
        caveats.append(
            f"percentile: {'BCa' if m.requested_method == 'bca' else 'studentized'} undefined"
        )
    if share > 0:
        caveats.append(
            f"{share:.0%} of replicates undefined"
            if share >= 0.01
            else f"{m.n_undefined_replicates} replicates undefined"
        )
    return out + (f" ({'; '.join(caveats)})" if caveats else "")


def _no_interval_words(m: Metric, share: float) -> str | None:
    """Why ``m`` has no interval, in a few words: the reason it was withheld (its note), not a
    guess from the share of undefined replicates (3% of them undefined withholds nothing)."""
    note = m.note or ""
    if m.B and share > MAX_UNDEFINED_SHARE:
        return f"no interval: {share:.0%} of replicates undefined"
    if SINGLE_CLUSTER in note:
        return "no interval: a single conversation"
    if DEGENERATE in note:
        return "no interval: degenerate replicates (too few conversations)"
    return next((n for n in note.split("; ") if n.startswith("no interval")), None)


def _pct(level: float) -> str:
    """``95%``, ``90%``, ``99.5%``: the confidence level as printed."""
    return f"{level * 100:.10g}%"


def _n_alpha(m: Metric | None) -> str:
    return "" if m is None or not m.n else f" (n = {m.n} pairable values)"


def _dimension(d: DimensionReport, level: float = DEFAULT_LEVEL) -> list[str]:
    out = [
        f"## Dimension `{d.dimension}`"
        + (f" (judge dimension `{d.judge_dimension}`)" if d.judge_dimension != d.dimension else ""),
        "",
        f"Items matched: {d.join.matched} (human only: {d.join.left_only}, judge only: "
        f"{d.join.right_only}). Humans: {', '.join(d.humans)}; aggregated per item by "
        f"{d.aggregate}. α level: {d.level}.",
        "",
    ]
    if d.join.left_only_examples or d.join.right_only_examples:
        out += [
            f"Unmatched examples — human: {d.join.left_only_examples}; judge: "
            f"{d.join.right_only_examples}",
            "",
        ]
    if d.human_alpha is not None:
        out += [
            f"Krippendorff's α among humans (all human ratings): {fmt_metric(d.human_alpha)}"
            + _n_alpha(d.human_alpha),
            "",
        ]
    if d.fleiss_humans is not None:
        out += [f"Fleiss' κ among humans: {fmt_metric(d.fleiss_humans)}", ""]
    if d.fleiss_with_judges is not None:
        out += [
            f"Fleiss' κ among humans and judge(s): {fmt_metric(d.fleiss_with_judges)}",
            "",
        ]
    for j in d.judges:
        out += [
            f"### Judge `{j.judge}` vs humans",
            "",
            f"Judge against the humans' per-item {d.aggregate}: n = {j.vs_humans.n} items "
            f"rated by the judge and a human, in {j.vs_humans.n_clusters} clusters.",
            "",
            f"| metric | estimate [{_pct(level)} CI] | n |",
        ]
        out += ["|---|---|---|"]
        for name, m in j.vs_humans.metrics.items():
            out.append(f"| {name} | {fmt_metric(m)} | {m.n} |")
        out.append("")
        if j.binary is not None:
            b = j.binary
            out += [
                f"As a pass/fail classifier (1 = pass; TP {b.tp}, FP {b.fp}, FN {b.fn}, "
                f"TN {b.tn}; judge passes {b.judge_pass_rate:.2f}, "
                f"humans {b.human_pass_rate:.2f}):",
                "",
                f"| figure | estimate [{_pct(level)} CI] |",
                "|---|---|",
                *[f"| {k} | {fmt_metric(m)} |" for k, m in b.metrics().items()],
                "",
            ]
        if j.alpha is not None:
            out += [
                f"- α humans only: {fmt_metric(j.alpha.humans_only)}"
                f"{_n_alpha(j.alpha.humans_only)}; with the judge as one more "
                f"coder: {fmt_metric(j.alpha.with_judge)}{_n_alpha(j.alpha.with_judge)}; "
                f"difference: {fmt_metric(j.alpha.difference)} (all human ratings; items the "
                "judge skipped count as missing values)",
            ]
        if j.ceiling is not None:
            out.append(
                f"- human ceiling ({j.ceiling.metric}, leave-one-out vs {j.ceiling.aggregate} of "
                f"the others): humans {fmt_num(j.ceiling.mean_human)}, "
                f"judge {fmt_num(j.ceiling.mean_judge)}"
            )
        if j.alt_test is not None:
            a = j.alt_test
            out.append(
                f"- alternative annotator test (ε={a.epsilon}, {a.fdr.upper()} at {a.alpha}): "
                f"winning rate ω = {fmt_num(a.winning_rate, 2)}, advantage probability ρ = "
                f"{fmt_num(a.advantage_probability, 2)} → {'passed' if a.passed else 'not passed'}"
            )
            out += [f"  - note: {w}" for w in a.warnings]
        out.append("")
    out += [f"- flag: {f}" for f in d.flags]
    return out


def calibration_markdown(report: CalibrationReport) -> str:
    """The agreement report as Markdown."""
    s = report.settings
    lines = [
        "# Judge calibration against human labels",
        "",
        f"Intervals: {_pct(float(str(s['level'])))} cluster bootstrap over conversations "
        f"(B={s['B']}, seed={s['seed']}; BCa, percentile where BCa is undefined).",
        "",
    ]
    for d in report.dimensions:
        lines += _dimension(d, float(str(s["level"])))
    return "\n".join(lines).rstrip() + "\n"


def preference_markdown(p: PreferenceAgreement) -> str:
    """Preference agreement as Markdown."""
    lines = [
        "# Judge verdicts vs participants' choices",
        "",
        *[f"> **Warning:** {w}\n" for w in p.warnings],
        f"Compared: {p.n_compared} (matched items {p.join.matched}; unanswered {p.n_unanswered}; "
        f"ties excluded {p.n_excluded_ties}). Tie policy: {p.tie_policy}.",
        "",
        f"- agreement: {fmt_metric(p.overall)}",
        f"- Cohen's κ (A/B/tie): {fmt_metric(p.kappa)}",
        "",
        f"| question | agreement [{_pct(p.overall.level)} CI] | n |",
        "|---|---|---|",
    ]
    lines += [f"| {q} | {fmt_metric(m)} | {m.n} |" for q, m in p.per_question.items()]
    return "\n".join(lines) + "\n"


def leaderboard_markdown(lb: Leaderboard) -> str:
    """The leaderboard as a Markdown table (warnings first, tiers explained)."""
    pct = _pct(lb.level)
    ranks = [r.rank for r in lb.rows]
    lines = ["# Leaderboard", ""]
    lines += [f"> **Warning:** {w}" for w in lb.warnings]
    if lb.warnings:
        lines.append("")
    lines += [
        lb.note,
        "",
        f"| rank | model | score [{pct} CI] | rank set (simultaneous) | rank set (marginal) "
        "| P(rank 1) | arena UB | n |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in lb.rows:
        s, m = r.rank_set_simultaneous, r.rank_set_marginal
        rank = f"{r.rank}=" if ranks.count(r.rank) > 1 else str(r.rank)
        claim = lb.rank_claims and r.no_rank_claim is None
        sets = f"{s[0]}–{s[1]} | {m[0]}–{m[1]}" if claim else "— | —"
        p1 = MISSING if r.p_rank_1 is None else f"{r.p_rank_1:.3f}"
        lines.append(
            f"| {rank if r.no_rank_claim is None else MISSING} | {r.model} "
            f"| {fmt_metric(r.score)} | {sets} "
            f"| {p1} | {r.arena_rank_upper_bound if claim else MISSING} | {r.n} |"
        )
    lines.append("")
    if any(ranks.count(x) > 1 for x in ranks):
        lines.append("`2=`: models with equal point scores share the better rank.")
    if lb.rank_claims:
        lines.append(
            "Tiers (models in one tier have the same simultaneous rank set and cannot be "
            f"ordered at {pct}): " + " > ".join("{" + ", ".join(t) + "}" for t in lb.tiers)
        )
        unranked = [f"{r.model} ({r.no_rank_claim})" for r in lb.rows if r.no_rank_claim]
        if unranked:
            lines.append(
                "No rank claim (comparable to every model: no rank, tier or P(rank 1)): "
                + "; ".join(unranked)
            )
    else:
        lines.append("No tiers: too few conversations for any claim about ranks.")
    return "\n".join(lines) + "\n"


def binary_markdown(groups: Sequence[BinaryAgreement], head: str = "item") -> list[str]:
    """A table: one row per group, TPR/TNR/precision/NPV/balanced accuracy/leniency with their
    intervals, the confusion counts and both pass rates."""
    if not groups:
        return []
    level = groups[0].tpr.level
    lines = [
        f"| {head} | "
        + " | ".join(BINARY_LABELS[k] for k in BINARY_METRICS)
        + " | TP / FP / FN / TN "
        "| judge pass | people pass | n |",
        "|---|" + "---|" * len(BINARY_METRICS) + "---|---:|---:|---:|",
    ]
    for g in groups:
        cells = [fmt_metric(m) for m in g.metrics().values()]
        lines.append(
            f"| {g.name} | " + " | ".join(cells) + f" | {g.tp} / {g.fp} / {g.fn} / {g.tn} | "
            f"{g.judge_pass_rate:.2f} | {g.human_pass_rate:.2f} | {g.n} |"
        )
    lines += [
        "",
        f"Pass = yes/1. {level:.0%} cluster-bootstrap intervals (conversations resampled). "
        "Leniency = judge pass rate − people's (> 0: the judge passes too much).",
    ]
    return lines
