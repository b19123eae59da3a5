"""Report sections of a scoring run that are not per-model scores.

* :func:`pairwise_section` — a pairwise judge's verdicts (both orders reconciled), wins per
  pair of reply kinds and its position bias, each rate with its cluster-bootstrap interval
  (the typed ``JudgeBlock.pairwise``, written by the runner's ``pairwise_block``).
* :func:`panels_section` — juries and several judges on the same items
  (the typed ``panels``): Krippendorff's α among the judges, each judge against the
  consensus (the jury's combined value), and self-preference by model family.
"""

from __future__ import annotations

from collections.abc import Sequence

from attune_judge.calibration import Metric
from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num
from attune_judge.runs import PairwiseBlock, PanelBlock, PanelNote

__all__ = ["pairwise_section", "panels_section"]


def _cell(metric: Metric | None) -> str:
    """``0.512 [0.401, 0.622]``; ``—`` when the metric is missing or undefined."""
    if metric is None or metric.estimate is None:
        return "—"
    interval = fmt_interval(metric.lower, metric.upper)
    return fmt_num(metric.estimate) + ("" if interval == "—" else f" {interval}")


def pairwise_section(block: PairwiseBlock, *, title: str = "Pairwise verdicts") -> Section:
    """Verdicts, wins per pair and position bias of one pairwise judge (its ``pairwise``
    block: verdict counts, wins per pair of reply kinds, position bias)."""
    section = Section(title)
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
