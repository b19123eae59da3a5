"""``report.md``: a short Markdown view of a run's typed summary (the report package writes
richer ones).

Kept apart from the runner's logic so the report layer can replace :func:`render_report_md`
without touching execution.
"""

from __future__ import annotations

from attune_judge.calibration import fmt_estimate, fmt_num
from attune_judge.runs import JudgeBlock, ModelBlock, RunManifest, RunSummary

__all__ = ["render_report_md"]


def _score_cell(model: ModelBlock) -> str:
    s = model.score
    return fmt_num(None) if s is None else fmt_estimate(s.mean, s.lower, s.upper)


def _level(models: dict[str, ModelBlock]) -> str:
    """The confidence level of the score intervals, as ``95%`` (95% when none is stored)."""
    levels = {m.score.level for m in models.values() if m.score is not None and m.score.level}
    level = levels.pop() if len(levels) == 1 else 0.95
    return f"{level * 100:.10g}%"


def _judge_section(jid: str, block: JudgeBlock) -> list[str]:
    models = block.models
    lines = [f"## Judge `{jid}`", "", block.label, ""]
    for finding in block.degenerate:
        lines += [f"**Warning: degenerate judge** — {finding.message}.", ""]
    board_warnings = block.leaderboard.warnings if block.leaderboard is not None else []
    for w in dict.fromkeys([*block.warnings, *board_warnings]):
        lines += [f"**Warning:** {w}", ""]
    lines += [
        f"| model | score (0–1) [{_level(models)} CI] | n ok | parse_error | lm_error | refused "
        "| missing |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]

    def order(name: str) -> float:
        score = models[name].score
        return -score.mean if score is not None and score.mean is not None else float("inf")

    for name in sorted(models, key=order):
        m = models[name]
        c = m.n_by_status
        lines.append(
            f"| {name} | {_score_cell(m)} | {m.n_ok} | {c.get('parse_error', 0)} "
            f"| {c.get('lm_error', 0)} | {c.get('refused', 0)} | {c.get('missing', 0)} |"
        )
    criteria = sorted({k for m in models.values() for k in m.criteria_means})
    if criteria:
        lines += ["", "Mean criterion scores (raw scale, ok judgments):", ""]
        lines.append("| model | " + " | ".join(criteria) + " |")
        lines.append("|---|" + "---:|" * len(criteria))
        for name in sorted(models, key=order):
            means = models[name].criteria_means
            lines.append(
                f"| {name} | " + " | ".join(fmt_num(means.get(k), 2) for k in criteria) + " |"
            )
    prompt = sum(m.tokens.prompt for m in models.values())
    completion = sum(m.tokens.completion for m in models.values())
    costs = [m.cost_usd for m in models.values() if m.cost_usd is not None]
    cost = f"${sum(costs):.4f}" if costs else "unknown"
    lines += ["", f"Tokens: {prompt} prompt, {completion} completion. Cost: {cost}.", ""]
    for name, member in block.members.items():
        known = member.cost_usd
        lines.append(
            f"- jury member {name}: {member.tokens.prompt} prompt, "
            f"{member.tokens.completion} completion tokens, cost "
            + (f"${known:.4f}" if known is not None else "unknown")
        )
    if block.members:
        lines.append("")
    return lines


def render_report_md(summary: RunSummary, manifest: RunManifest | None = None) -> str:
    """The Markdown text of ``report.md`` for a run's typed summary and manifest."""
    run = getattr(summary, "run", None)
    lines = ["# attune-judge score", ""]
    if manifest is not None:
        lines.append(
            f"- data: `{manifest.arguments.get('data', '?')}` "
            f"(fingerprint `{manifest.data_fingerprint}`)"
        )
        lines.append(f"- models: {', '.join(manifest.models)}")
    if run is not None:
        lines.append(f"- tasks: {run.n_tasks}; complete: {run.complete}")
        if run.stopped:
            lines.append(f"- **stopped early**: {run.stopped}")
        if run.wall_time_s is not None:
            total = run.wall_time_total_s if run.wall_time_total_s is not None else run.wall_time_s
            lines.append(
                f"- wall time: {run.wall_time_s:.1f} s this invocation, {total:.1f} s over "
                f"{run.invocations or 1} invocation(s)"
            )
    lines += [
        "",
        "Scores are normalised to 0–1 and averaged over ok judgments; the interval is a paired "
        "cluster bootstrap over conversations. Failed judgments are counted, never scored.",
        "",
    ]
    for jid, block in (getattr(summary, "judges", None) or {}).items():
        lines += _judge_section(jid, block)
    return "\n".join(lines).rstrip() + "\n"
