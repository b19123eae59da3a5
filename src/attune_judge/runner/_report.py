"""``report.md``: a short Markdown view of ``summary.json`` (the report package writes richer ones).

Kept apart from the runner's logic so the report layer can replace :func:`render_report_md`
without touching execution.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attune_judge.calibration import fmt_estimate, fmt_num

__all__ = ["render_report_md"]


def _score_cell(score: Mapping[str, Any] | None) -> str:
    score = score or {}
    return fmt_estimate(score.get("mean"), score.get("lower"), score.get("upper"))


def _level(models: Mapping[str, Any]) -> str:
    """The confidence level of the score intervals, as ``95%`` (95% when none is stored)."""
    levels = {float(lv) for m in models.values() if (lv := (m.get("score") or {}).get("level"))}
    level = levels.pop() if len(levels) == 1 else 0.95
    return f"{level * 100:.10g}%"


def _judge_section(jid: str, block: Mapping[str, Any]) -> list[str]:
    models: Mapping[str, Any] = block["models"]
    lines = [f"## Judge `{jid}`", "", f"{block.get('label', '')}", ""]
    for finding in block.get("degenerate") or []:
        lines += [f"**Warning: degenerate judge** — {finding.get('message')}.", ""]
    board = block.get("leaderboard")
    board_warnings = (board.get("warnings") or []) if isinstance(board, Mapping) else []
    for w in dict.fromkeys([*(block.get("warnings") or []), *board_warnings]):
        lines += [f"**Warning:** {w}", ""]
    lines += [
        f"| model | score (0–1) [{_level(models)} CI] | n ok | parse_error | lm_error | refused "
        "| missing |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]

    def order(name: str) -> float:
        score = models[name].get("score") or {}
        mean = score.get("mean")
        return -mean if mean is not None else float("inf")

    for name in sorted(models, key=order):
        m = models[name]
        c = m["n_by_status"]
        lines.append(
            f"| {name} | {_score_cell(m.get('score'))} | {m['n_ok']} | {c['parse_error']} "
            f"| {c['lm_error']} | {c['refused']} | {c['missing']} |"
        )
    criteria = sorted({k for m in models.values() for k in m.get("criteria_means", {})})
    if criteria:
        lines += ["", "Mean criterion scores (raw scale, ok judgments):", ""]
        lines.append("| model | " + " | ".join(criteria) + " |")
        lines.append("|---|" + "---:|" * len(criteria))
        for name in sorted(models, key=order):
            means = models[name].get("criteria_means", {})
            lines.append(
                f"| {name} | " + " | ".join(fmt_num(means.get(k), 2) for k in criteria) + " |"
            )
    tokens = {k: sum(m["tokens"][k] for m in models.values()) for k in ("prompt", "completion")}
    costs = [m["cost_usd"] for m in models.values() if m.get("cost_usd") is not None]
    cost = f"${sum(costs):.4f}" if costs else "unknown"
    lines += [
        "",
        f"Tokens: {tokens['prompt']} prompt, {tokens['completion']} completion. Cost: {cost}.",
        "",
    ]
    for name, member in (block.get("members") or {}).items():
        known = member.get("cost_usd")
        lines.append(
            f"- jury member {name}: {member['tokens']['prompt']} prompt, "
            f"{member['tokens']['completion']} completion tokens, cost "
            + (f"${known:.4f}" if known is not None else "unknown")
        )
    if block.get("members"):
        lines.append("")
    return lines


def render_report_md(summary: Mapping[str, Any], manifest: Mapping[str, Any]) -> str:
    """The Markdown text of ``report.md`` for a run's summary and manifest."""
    run = summary.get("run", {})
    args = manifest.get("arguments", {})
    lines = ["# attune-judge score", ""]
    lines.append(
        f"- data: `{args.get('data', '?')}` (fingerprint `{manifest.get('data_fingerprint', '?')}`)"
    )
    lines.append(f"- models: {', '.join(manifest.get('models', []))}")
    lines.append(f"- tasks: {run.get('n_tasks', '?')}; complete: {run.get('complete', '?')}")
    if run.get("stopped"):
        lines.append(f"- **stopped early**: {run['stopped']}")
    if run.get("wall_time_s") is not None:
        total = run.get("wall_time_total_s", run["wall_time_s"])
        lines.append(
            f"- wall time: {run['wall_time_s']:.1f} s this invocation, {total:.1f} s over "
            f"{run.get('invocations', 1)} invocation(s)"
        )
    lines += [
        "",
        "Scores are normalised to 0–1 and averaged over ok judgments; the interval is a paired "
        "cluster bootstrap over conversations. Failed judgments are counted, never scored.",
        "",
    ]
    for jid, block in summary.get("judges", {}).items():
        lines += _judge_section(jid, block)
    return "\n".join(lines).rstrip() + "\n"
