"""Sections of a scoring run (the runner's ``summary.json``: ``judges → models → blocks``).

Per judge: the leaderboard the runner stored (intervals and rank sets), mean criterion
scores, and failures, tokens and cost. Judges are never pooled. Nothing is computed here: a
judge without a stored leaderboard (fewer than two conversations) shows its models' means.
"""

from __future__ import annotations

from collections.abc import Mapping

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import Metric
from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_num
from attune_judge.report._leaderboard import leaderboard_entries, leaderboard_section
from attune_judge.report._panel_sections import pairwise_section, panels_section
from attune_judge.report._run_sections import failures_section, members_section
from attune_judge.report._rundata import RunData
from attune_judge.runs import BenchLeaderboard, BenchRow, JudgeBlock, ModelBlock

__all__ = ["score_sections"]


def _criteria_table(models: Mapping[str, ModelBlock], order: list[str]) -> Table | None:
    criteria = sorted({k for m in models.values() for k in m.criteria_means})
    if not criteria:
        return None
    rows = [
        [m, fmt_num(models[m].overall_mean, 2)]
        + [fmt_num(models[m].criteria_means.get(c), 2) for c in criteria]
        for m in order
        if m in models
    ]
    return Table(
        ["model", "overall", *criteria],
        rows,
        "l" + "r" * (len(criteria) + 1),
        caption="Means over ok judgments on the rubric's raw scale (no intervals).",
    )


def _means_board(models: Mapping[str, ModelBlock]) -> BenchLeaderboard:
    """A judge without a stored leaderboard (one model or one conversation): its models'
    means and intervals, ranked by the mean, without rank sets."""
    means = {m: b.score.mean if b.score else None for m, b in models.items()}
    rows = []
    for m, b in models.items():
        s, mean = b.score, means[m]
        score = Metric(
            name="mean",
            estimate=mean,
            lower=s.lower if s else None,
            upper=s.upper if s else None,
            n=s.n if s else b.n_ok,
            n_clusters=s.n_conversations if s else 0,
        )
        better = sum(1 for v in means.values() if v is not None and mean is not None and v > mean)
        rows.append(BenchRow(model=m, score=score, rank=None if mean is None else 1 + better))
    return BenchLeaderboard(rows=rows)


def _judge_section(jid: str, block: JudgeBlock, title: str) -> Section:
    models = block.models
    first = next((m.score for m in models.values() if m.score and m.score.B), None)
    level = first.level if first else DEFAULT_LEVEL
    section = Section(title, anchor=f"judge-{jid}")
    section.blocks.append(Paragraph(f"Judge {jid}: {block.label}".rstrip(": ")))
    for finding in block.degenerate:
        text = f"Degenerate judge: it {finding.message}; read its scores as noise."
        if finding.reason == "criterion_order":
            text = f"Degenerate judge: {finding.message}; read its scores as noise."
        section.blocks.append(Note(text, "warning"))
    section.blocks.extend(Note(w, "warning") for w in block.warnings)
    if block.pairwise is not None:
        # a pairwise judge's "score" is whether the first-listed reply won: no leaderboard
        section.subsections.append(pairwise_section(block.pairwise, key=jid))
        section.subsections.append(failures_section(models, key=f"{jid}-failures"))
        _add_members(section, block)
        return section
    board = block.leaderboard or _means_board(models)
    note = f"Mean normalised score of ok judgments; {level * 100:g}% intervals from a paired " + (
        f"cluster bootstrap over conversations (B = {first.B}, seed = {first.seed})."
        if first
        else "cluster bootstrap over conversations."
    )
    lb = leaderboard_section(
        board, title="Leaderboard", key=f"{jid}-leaderboard", level=level, interval_note=note
    )
    section.subsections.append(lb)
    order = [e.model for e in leaderboard_entries(board)]
    crit = _criteria_table(models, order)
    if crit is not None:
        section.subsections.append(Section("Criterion scores", [crit]))
    section.subsections.append(failures_section(models, key=f"{jid}-failures", order=order))
    _add_members(section, block)
    return section


def _add_members(section: Section, block: JudgeBlock) -> None:
    members = members_section(block.members)
    if members is not None:
        section.subsections.append(members)


def score_sections(run: RunData) -> list[Section]:
    """One section per judge in ``summary["judges"]``."""
    judges: Mapping[str, JudgeBlock] = getattr(run.record, "judges", {})
    out = []
    for i, (jid, block) in enumerate(judges.items()):
        title = "Scores" if len(judges) == 1 else f"Scores: judge {i + 1} ({block.label or jid})"
        out.append(_judge_section(jid, block, title))
    if len(judges) > 1:
        out[0].blocks.insert(
            0,
            Note(
                "This run has several judges (rubrics or models); each has its own leaderboard "
                "and their scores are never pooled."
            ),
        )
    panels = panels_section(getattr(run.record, "panels", []))
    if panels is not None:
        out.append(panels)
    return out
