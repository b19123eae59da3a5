"""Report sections of a scoring run that are not per-model scores.

* :func:`pairwise_section` — a pairwise judge's verdicts (both orders reconciled), wins per
  pair of reply kinds and its position bias, each rate with its cluster-bootstrap interval
  (``summary["judges"][jid]["pairwise"]``, written by the runner's ``pairwise_block``).
* :func:`panels_section` — juries and several judges on the same items
  (``summary["panels"]``): Krippendorff's α among the judges, each judge against the
  consensus (the jury's combined value), and self-preference by model family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.report._blocks import Note, Paragraph, Section, Table
from attune_judge.report._format import fmt_int, fmt_interval, fmt_num

__all__ = ["pairwise_section", "panels_section"]


def _cell(metric: Mapping[str, Any] | None) -> str:
    """``0.512 [0.401, 0.622]``; ``—`` when the metric is missing or undefined."""
    if not metric or metric.get("estimate") is None:
        return "—"
    interval = fmt_interval(metric.get("lower"), metric.get("upper"))
    return fmt_num(metric["estimate"]) + ("" if interval == "—" else f" {interval}")


def _level(metrics: Sequence[Mapping[str, Any] | None]) -> str:
    level = next((float(m["level"]) for m in metrics if m and m.get("level")), 0.95)
    return f"{level * 100:g}%"


def pairwise_section(block: Mapping[str, Any], *, title: str = "Pairwise verdicts") -> Section:
    """Verdicts, wins per pair and position bias of one pairwise judge.

    Parameters
    ----------
    block
        The judge's ``pairwise`` block: ``n_pairs``, ``verdicts`` (``A``/``B``/``tie``/
        ``inconsistent`` counts), ``by_pair`` (``"x vs y"`` → ``n``, ``wins``, ``ties``,
        ``inconsistent``) and ``position_bias`` (``flip_rate``, ``first_position_win_rate``,
        ``tie_rate`` metrics).
    """
    section = Section(title)
    v: Mapping[str, Any] = block.get("verdicts") or {}
    section.blocks.append(
        Paragraph(
            f"{fmt_int(block.get('n_pairs'))} pairs, each judged in both orders and reconciled: "
            f"A {fmt_int(v.get('A', 0))}, B {fmt_int(v.get('B', 0))}, "
            f"tie {fmt_int(v.get('tie', 0))}, inconsistent {fmt_int(v.get('inconsistent', 0))} "
            "(opposite winners in the two orders)."
        )
    )
    by_pair: Mapping[str, Mapping[str, Any]] = block.get("by_pair") or {}
    if by_pair:
        rows = []
        for pair, c in by_pair.items():
            wins = ", ".join(f"{name} {fmt_int(n)}" for name, n in (c.get("wins") or {}).items())
            rows.append(
                [
                    pair,
                    fmt_int(c.get("n")),
                    wins,
                    fmt_int(c.get("ties")),
                    fmt_int(c.get("inconsistent")),
                ]
            )
        section.blocks.append(
            Table(
                ["pair", "n", "wins", "ties", "inconsistent"],
                rows,
                "lrlrr",
                caption="Which reply the judge preferred, per pair of reply kinds (or models).",
            )
        )
    bias: Mapping[str, Any] = block.get("position_bias") or {}
    if bias:
        names = (
            ("first_position_win_rate", "first-position win rate (0.5 = no bias)"),
            ("flip_rate", "flip rate (winner changes with the order)"),
            ("tie_rate", "tie rate"),
        )
        metrics = [bias.get(k) for k, _ in names]
        rows = [
            [label, _cell(bias.get(k)), fmt_int((bias.get(k) or {}).get("n"))]
            for k, label in names
            if bias.get(k)
        ]
        section.blocks.append(
            Table(
                ["position bias", f"estimate [{_level(metrics)} interval]", "n"],
                rows,
                "lrr",
                caption="Cluster-bootstrap intervals over conversations. First-position win "
                "rate and tie rate count the single-order calls; flip rate counts pairs.",
            )
        )
    return section


def _panel(panel: Mapping[str, Any]) -> Section:
    jury = panel.get("jury_id")
    section = Section(f"Jury {jury}" if jury else "Independent judges on the same items")
    if "raters" not in panel:  # the runner could not compare them: it says why
        section.blocks.append(Note(str(panel.get("note") or "not enough shared items"), "warning"))
        return section
    alpha = panel.get("alpha") or {}
    level = str(alpha.get("name") or "").rsplit("_", 1)[-1]
    section.blocks.append(
        Paragraph(
            f"{len(panel['raters'])} judges, {fmt_int(panel.get('n_items'))} items. "
            f"Krippendorff's α among them{f' ({level})' if level else ''}: {_cell(alpha)}."
        )
    )
    members: Sequence[Mapping[str, Any]] = panel.get("members") or []
    if members:
        names = list((members[0].get("vs_consensus") or {}).get("metrics") or {})
        rows = []
        for m in members:
            metrics = (m.get("vs_consensus") or {}).get("metrics") or {}
            rows.append(
                [
                    str(m.get("model") or m.get("member")),
                    fmt_int(m["vs_consensus"].get("n")),
                    *(_cell(metrics.get(k)) for k in names),
                ]
            )
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
    prefs: Sequence[Mapping[str, Any]] = panel.get("self_preference") or []
    if prefs:
        rows = [
            [
                str(s.get("model") or s.get("member")),
                str(s.get("family")),
                fmt_int(s.get("n_own")),
                _cell(s.get("own_family")),
                fmt_int(s.get("n_other")),
                _cell(s.get("other_families")),
                _cell(s.get("bias")),
            ]
            for s in prefs
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
    for note in panel.get("notes") or []:
        section.blocks.append(Note(str(note)))
    return section


def panels_section(panels: Sequence[Mapping[str, Any]]) -> Section | None:
    """Agreement among judges, per jury (and for independent judges); ``None`` if none."""
    if not panels:
        return None
    section = Section("Agreement among judges", anchor="panels")
    section.subsections.extend(_panel(p) for p in panels)
    return section
