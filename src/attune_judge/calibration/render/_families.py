"""Markdown of the behaviour, preference-baseline, corrected pass-rate and PPI results.

Kept out of the statistics families (which never import a renderer); exported by
:mod:`attune_judge.calibration`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attune_judge.calibration.agreement._behaviour_agreement import (
    BehaviourAgreement,
    BehaviourGroup,
)
from attune_judge.calibration.ppi._corrected import CorrectedPassRates
from attune_judge.calibration.ppi._ppi_plus import PPIDifference, PPIEstimate, PPILeaderboard
from attune_judge.calibration.preference._preference_baselines import PreferenceComparison
from attune_judge.calibration.render._markdown import (
    binary_markdown,
    fmt_estimate,
    fmt_metric,
    fmt_num,
)

__all__ = [
    "behaviour_markdown",
    "corrected_pass_rates_markdown",
    "ppi_leaderboard_markdown",
    "preference_comparison_markdown",
]


def behaviour_markdown(a: BehaviourAgreement) -> str:
    """Per-category and per-item tables."""

    def table(groups: Sequence[BehaviourGroup], head: str) -> list[str]:
        lines = [
            f"| {head} | agreement [95% CI] | Cohen's κ | judge yes | participants yes | n |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {g.name} | {fmt_metric(g.agreement)} | {fmt_metric(g.kappa)} | "
            f"{g.judge_yes_rate:.2f} | {g.human_yes_rate:.2f} | {g.n} |"
            for g in groups
        ]
        return lines

    o = a.overall
    lines = [
        f"# Behaviour items: judge vs participants ({a.view} view)",
        "",
        *[f"> **Warning:** {w}\n" for w in a.warnings],
        f"All items: agreement {fmt_metric(o.agreement)}, Cohen's κ {fmt_metric(o.kappa)} "
        f"(n={o.n} answers, {o.n_clusters} conversations; participant na/unanswered left out: "
        f"{a.n_human_na}).",
        "",
        *table(a.per_category, "category"),
        "",
        *table(a.per_item, "item"),
        "",
        f"## The judge as a pass/fail classifier (yes = pass, {a.view} view)",
        "",
        *binary_markdown(
            [g.binary for g in [a.overall, *a.per_category, *a.per_item] if g.binary],
            head="scope",
        ),
    ]
    return "\n".join(lines) + "\n"


def preference_comparison_markdown(c: PreferenceComparison) -> str:
    """The rows as a Markdown table."""
    lines = [
        "## Judge vs no-judge baselines (same comparisons)",
        "",
        "| rater | agreement (A/B/tie) | Cohen's κ | accuracy excl. ties | n | n excl. ties |",
        "|---|---|---|---|---|---|",
    ]
    for r in c.rows:
        lines.append(
            f"| {r.rater} | {fmt_metric(r.three_class)} | {fmt_metric(r.kappa)} | "
            f"{fmt_metric(r.excluding_ties)} | {r.n_compared} | {r.n_excluding_ties} |"
        )
    lines += ["", *c.notes] if c.notes else []
    return "\n".join(lines) + "\n"


def corrected_pass_rates_markdown(res: CorrectedPassRates) -> str:
    """The per-model table (judge, corrected, PPI++, people) and the warnings."""
    pct = f"{res.level:.0%}"
    jb = res.judge
    lines = [
        f"## Corrected pass rates ({pct} intervals)",
        "",
        *[f"> **Warning ({w.code}):** {w.message}\n" for w in res.warnings],
        f"Judge on {jb.n} labelled items ({jb.n_clusters} conversations): TPR "
        f"{fmt_metric(jb.tpr)}, TNR {fmt_metric(jb.tnr)}, J = TPR + TNR − 1 "
        f"{fmt_metric(res.youden)}.",
        "",
        "| model | judge pass rate | corrected (Rogan–Gladen) | PPI++ | people (labelled) "
        "| labelled / items |",
        "|---|---:|---|---|---:|---|",
    ]
    for r in res.rows:
        ppi = "—" if r.ppi is None else fmt_estimate(r.ppi.estimate, r.ppi.lower, r.ppi.upper)
        human = "—" if r.human_rate is None else f"{r.human_rate:.3f}"
        corr = fmt_metric(r.corrected)
        if r.clipped:
            corr += f" (clipped; raw {r.raw_estimate:.3f})"
        lines.append(
            f"| {r.model} | {r.judge_rate:.3f} | {corr} | {ppi} | {human} | "
            f"{r.n_labelled} / {r.n_items} |"
        )
    lines += ["", f"{res.method}; B = {res.B}, {res.n_clusters} conversations.", ""]
    return "\n".join(lines)


def _verdict(d: PPIDifference, blocked: Mapping[str, str | None], claims: bool) -> str:
    """``yes`` / ``no``, or why no claim is made about the pair."""
    if d.distinguishable:
        return "yes"
    out = [m for m in (d.model_a, d.model_b) if m in blocked and claims]
    return f"no claim ({', '.join(out)}: no rank claim)" if out else "no"


def ppi_leaderboard_markdown(board: PPILeaderboard) -> str:
    """The leaderboard as Markdown: per-model table and pairwise differences."""

    def cell(e: PPIEstimate) -> str:
        return fmt_estimate(e.estimate, e.lower, e.upper)

    pct = f"{board.level:.0%}"
    lines = [
        f"## Prediction-powered leaderboard ({pct} intervals)",
        "",
        *[f"> **Warning:** {w}\n" for w in board.warnings],
        "| rank | model | PPI++ | judge only | human only | λ | labelled / unlabelled | ESS gain |",
        "|---:|---|---|---|---|---:|---|---:|",
    ]
    blocked = {r.model: r.no_rank_claim for r in board.rows if r.no_rank_claim}
    for r in board.rows:
        gain = "—" if r.ess_gain is None else f"{r.ess_gain:.2f}×"
        rank = "—" if r.no_rank_claim else str(r.rank)
        lines.append(
            f"| {rank} | {r.model} | {cell(r.ppi)} | {cell(r.judge_only)} | "
            f"{cell(r.human_only)} | {fmt_num(r.lam, 2)} | {r.n_labelled} / {r.n_unlabelled} "
            f"| {gain} |"
        )
    if blocked and board.rank_claims:
        lines += [
            "",
            "No rank claim (comparable to every model): "
            + "; ".join(f"{m} ({why})" for m, why in blocked.items()),
        ]
    if board.differences:
        lines += [
            "",
            "### Pairwise differences",
            "",
            "| difference | PPI++ | judge only | human only | ESS gain | distinguishable |",
            "|---|---|---|---|---:|---|",
        ]
        for d in board.differences:
            gain = "—" if d.ess_gain is None else f"{d.ess_gain:.2f}×"
            lines.append(
                f"| {d.model_a} − {d.model_b} | {cell(d.ppi)} | {cell(d.judge_only)} | "
                f"{cell(d.human_only)} | {gain} | {_verdict(d, blocked, board.rank_claims)} |"
            )
    lines += ["", f"{board.method}; {board.n_clusters} clusters. {board.note}", ""]
    return "\n".join(lines)
