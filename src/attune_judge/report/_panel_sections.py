"""Report sections of a scoring run that are not per-model scores.

* :func:`pairwise_section` — a pairwise judge's verdicts (both orders reconciled), wins per
  pair of reply kinds and its position bias, each rate with its cluster-bootstrap interval
  (the typed ``JudgeBlock.pairwise``, written by the runner's ``pairwise_block``), and the
  Bradley–Terry ranking of each group of options compared with each other, drawn as a
  leaderboard (strengths with intervals, rank sets, the rule for claims).
* :func:`panels_section` — juries and several judges on the same items
  (the typed ``panels``): Krippendorff's α among the judges, each judge against the
  consensus (the jury's combined value), and self-preference by model family.
"""

from __future__ import annotations

from collections.abc import Sequence

from attune_judge._bootstrap import DEFAULT_LEVEL
from attune_judge.calibration import BradleyTerryResult, Metric
from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num
from attune_judge.report._leaderboard import leaderboard_section
from attune_judge.runs import BenchLeaderboard, BenchRow, PairwiseBlock, PanelBlock, PanelNote

__all__ = ["bradley_terry_board", "pairwise_section", "panels_section"]


def _cell(metric: Metric | None) -> str:
    """``0.512 [0.401, 0.622]``; ``—`` when the metric is missing or undefined."""
    if metric is None or metric.estimate is None:
        return "—"
    interval = fmt_interval(metric.lower, metric.upper)
    return fmt_num(metric.estimate) + ("" if interval == "—" else f" {interval}")


def bradley_terry_board(res: BradleyTerryResult) -> BenchLeaderboard:
    """A Bradley–Terry fit as a leaderboard: each option's strength β with its interval, point
    rank, rank sets, P(rank 1) and its no-rank-claim reason (the one rule for claims)."""
    sim, mar = res.rank_sets_simultaneous, res.rank_sets_marginal
    est = [s.estimate for s in res.strengths]
    rows = [
        BenchRow(
            model=label,
            score=res.strengths[i],
            rank=None if est[i] is None else 1 + sum(e is not None and e > est[i] for e in est),  # type: ignore[operator]
            rank_set_simultaneous=(sim.lower[i], sim.upper[i]),
            rank_set_marginal=(mar.lower[i], mar.upper[i]),
            p_rank_1=res.rank_probabilities.p_rank_1[i],
            no_rank_claim=res.no_rank_claim.get(label),
        )
        for i, label in enumerate(res.labels)
    ]
    return BenchLeaderboard(rows=rows, warnings=res.warnings, rank_claims=res.rank_claims)


def _rankings(block: PairwiseBlock, key: str) -> list[Section]:
    """One leaderboard of Bradley–Terry strengths per group of options compared."""
    out = []
    for r in block.rankings or []:
        title = f"Bradley–Terry ranking: {', '.join(r.options)}"
        if r.bradley_terry is None:
            section = Section(title)
            section.blocks.append(Note(f"No ranking: {r.note}", "warning"))
            out.append(section)
            continue
        level = r.bradley_terry.strengths[0].level if r.bradley_terry.strengths else DEFAULT_LEVEL
        out.append(
            leaderboard_section(
                bradley_terry_board(r.bradley_terry),
                title=title,
                key=f"{key}-bt-{'-'.join(r.options)}",
                score_label="strength β (logit)",
                level=level,
                interval_note=(
                    f"{r.bradley_terry.n_comparisons:g} comparisons (a tie half a win each, an "
                    "inconsistent verdict a tie); strength β on the logit scale, mean 0 in the "
                    "group; cluster-bootstrap intervals over conversations."
                ),
                xlim=None,
            )
        )
    if block.ranking_note and not block.rankings:
        section = Section("Bradley–Terry ranking")
        section.blocks.append(Note(f"No ranking: {block.ranking_note}", "warning"))
        out.append(section)
    return out


def pairwise_section(
    block: PairwiseBlock, *, title: str = "Pairwise verdicts", key: str = "pairwise"
) -> Section:
    """Verdicts, wins per pair and position bias of one pairwise judge (its ``pairwise``
    block: verdict counts, wins per pair of reply kinds, position bias), and the Bradley–Terry
    ranking of each group of options; ``key`` prefixes the figure names (unique per report)."""
    section = Section(title)
    section.subsections.extend(_rankings(block, key))
    v = block.verdicts
    section.blocks.append(
        Paragraph(
            f"{fmt_int(block.n_pairs)} pairs, each judged in both orders and reconciled: "
            f"A {fmt_int(v.get('A', 0))}, B {fmt_int(v.get('B', 0))}, "
            f"tie {fmt_int(v.get('tie', 0))}, inconsistent {fmt_int(v.get('inconsistent', 0))} "
            "(opposite winners in the two orders)."
        )
    )
    if block.by_pair:
        rows = [
            [
                pair,
                fmt_int(c.n),
                ", ".join(f"{name} {fmt_int(n)}" for name, n in c.wins.items()),
                fmt_int(c.ties),
                fmt_int(c.inconsistent),
            ]
            for pair, c in block.by_pair.items()
        ]
        section.blocks.append(
            Table(
                ["pair", "n", "wins", "ties", "inconsistent"],
                rows,
                "lrlrr",
                caption="Which reply the judge preferred, per pair of reply kinds (or models).",
            )
        )
    bias = block.position_bias
    if bias is not None:
        metrics = [
            (bias.first_position_win_rate, "first-position win rate (0.5 = no bias)"),
            (bias.flip_rate, "flip rate (winner changes with the order)"),
            (bias.tie_rate, "tie rate"),
        ]
        level = f"{metrics[0][0].level * 100:g}%"
        section.blocks.append(
            Table(
                ["position bias", f"estimate [{level} interval]", "n"],
                [[label, _cell(m), fmt_int(m.n)] for m, label in metrics],
                "lrr",
                caption="Cluster-bootstrap intervals over conversations. First-position win "
                "rate and tie rate count the single-order calls; flip rate counts pairs.",
            )
        )
    return section


def _panel(panel: PanelBlock | PanelNote) -> Section:
    jury = panel.jury_id
    section = Section(f"Jury {jury}" if jury else "Independent judges on the same items")
    if isinstance(panel, PanelNote):  # the runner could not compare them: it says why
        section.blocks.append(Note(panel.note or "not enough shared items", "warning"))
        return section
    alpha = panel.alpha
    level = (alpha.name if alpha else "").rsplit("_", 1)[-1]
    section.blocks.append(
        Paragraph(
            f"{len(panel.raters)} judges, {fmt_int(panel.n_items)} items. "
            f"Krippendorff's α among them{f' ({level})' if level else ''}: {_cell(alpha)}."
        )
    )
    if panel.members:
        names = list(panel.members[0].vs_consensus.metrics)
        rows = [
            [
                m.model or m.member,
                fmt_int(m.vs_consensus.n),
                *(_cell(m.vs_consensus.metrics.get(k)) for k in names),
            ]
            for m in panel.members
        ]
        section.blocks.append(
            Table(
                ["judge", "n", *names],
                rows,
                "lr" + "r" * len(names),
                caption=(
                    "Each member against the jury's combined value"
                    if jury
                    else "Each judge against the judges' consensus (mean, or majority)"
                )
                + "; cluster-bootstrap intervals over conversations.",
            )
        )
    if panel.self_preference:
        rows = [
            [
                s.model or s.member,
                s.family,
                fmt_int(s.n_own),
                _cell(s.own_family),
                fmt_int(s.n_other),
                _cell(s.other_families),
                _cell(s.bias),
            ]
            for s in panel.self_preference
        ]
        section.blocks.append(
            Table(
                [
                    "judge",
                    "family",
                    "n own",
                    "own family",
                    "n other",
                    "other families",
                    "difference",
                ],
                rows,
                "llrrrrr",
                caption="Self-preference: the judge's score minus the other judges' mean score "
                "on replies written by its own model family, the same on the other replies, and "
                "their difference (beyond general leniency). With two judges, one judge's "
                "self-preference also shows in the other's difference: read the own-family "
                "figure first.",
            )
        )
    section.blocks.extend(Note(note) for note in panel.notes)
    return section


def panels_section(panels: Sequence[PanelBlock | PanelNote]) -> Section | None:
    """Agreement among judges, per jury (and for independent judges); ``None`` if none."""
    if not panels:
        return None
    section = Section("Agreement among judges", anchor="panels")
    section.subsections.extend(_panel(p) for p in panels)
    return section
