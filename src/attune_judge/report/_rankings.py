"""Sections comparing rankings: the Kendall τ heatmap with per-comparison τ intervals, the
rank-flip table and stability verdicts (rubric sensitivity; AttuneBench cross-task rankings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attune_judge.report._blocks import Figure, Paragraph, Section, Table, slugify
from attune_judge.report._fig_matrices import tau_heatmap
from attune_judge.report._format import MISSING, fmt_interval, fmt_num

__all__ = ["rank_flip_table", "ranking_agreement_section", "tau_table"]


def _dump(obj: Any) -> Any:
    return obj.model_dump() if hasattr(obj, "model_dump") else obj


def _yes_no(x: Any) -> str:
    return MISSING if x is None else ("yes" if x else "no")


def tau_table(rows: Sequence[Mapping[str, Any]], *, against: str = "base") -> Table:
    """Kendall τ of each ranking against a reference, with its interval and a verdict.

    Parameters
    ----------
    rows
        Dicts with ``label`` (variant or task), ``tau`` (estimate, or a Metric / dict with
        ``estimate``, ``lower``, ``upper``), optional ``lower``/``upper``, and optional
        ``stable`` (bool: the ranking is stable at the declared α) and ``verdict`` (text).
    against
        Name of the reference ranking (column header).
    """
    out = []
    for r in rows:
        r = _dump(r)
        tau = _dump(r.get("tau"))
        if isinstance(tau, Mapping):
            est, lo, hi = tau.get("estimate"), tau.get("lower"), tau.get("upper")
        else:
            est, lo, hi = tau, r.get("lower"), r.get("upper")
        verdict = r.get("verdict")
        if verdict is None and r.get("stable") is not None:
            verdict = "stable" if r["stable"] else "UNSTABLE"
        out.append(
            [str(r.get("label", "?")), fmt_num(est), fmt_interval(lo, hi), str(verdict or MISSING)]
        )
    cols = ["ranking", f"Kendall τ-b vs {against}", "95% interval", "verdict"]
    if all(row[3] == MISSING for row in out):  # no verdicts (a bench run): no empty column
        return Table(cols[:3], [row[:3] for row in out], "lrr")
    return Table(cols, out, "lrrl")


def rank_flip_table(flips: Sequence[Any]) -> Table:
    """Pairs of models whose order differs between two rankings.

    Parameters
    ----------
    flips
        Dicts (or models, such as :class:`attune_judge.runs.Flip`) with ``variant`` (or
        ``label``), ``model_a``, ``model_b`` (``model_a`` ahead in the reference), optional
        ``delta_base`` / ``delta_variant`` (score differences a − b), ``within_intervals``
        (bool: the swap lies inside the intervals, i.e. the pair was not distinguishable in
        the first place) and ``significant`` (bool: the change of the difference is
        significant).
    """
    dumped = [_dump(f) for f in flips]
    has_sig = any("significant" in f for f in dumped)
    rows = []
    for f in dumped:
        a, b = f.get("model_a", "?"), f.get("model_b", "?")
        row = [
            str(f.get("variant", f.get("label", "?"))),
            f"{a} > {b}",
            f"{b} > {a}",
            fmt_num(f.get("delta_base")),
            fmt_num(f.get("delta_variant")),
            _yes_no(f.get("within_intervals")),
        ]
        if has_sig:
            row.append(_yes_no(f.get("significant")))
        rows.append(row)
    cols = [
        "variant",
        "reference order",
        "variant order",
        "Δ reference (a − b)",
        "Δ variant (a − b)",
        "within intervals",
    ]
    return Table(
        cols + (["significant change"] if has_sig else []),
        rows,
        "lllrrcc",
        caption="A flip 'within intervals' swaps two models the data could not tell apart; a flip "
        "outside the intervals changes a conclusion.",
    )


def ranking_agreement_section(
    labels: Sequence[str],
    matrix: Sequence[Sequence[float | None]] | None = None,
    *,
    taus: Sequence[Mapping[str, Any]] | None = None,
    flips: Sequence[Any] | None = None,
    against: str = "base",
    title: str = "Ranking stability",
    key: str = "sensitivity",
    col_labels: Sequence[str] | None = None,
    extra: Sequence[tuple[str, str]] = (),
) -> Section:
    """τ heatmap between rankings, τ-vs-reference table, and the rank-flip table.

    Parameters
    ----------
    labels, matrix
        Ranking labels (variants, tasks) and the τ matrix between them (rows × ``col_labels``,
        square by default).
    taus
        Rows for :func:`tau_table` (τ of each ranking against ``against``).
    flips
        Rows for :func:`rank_flip_table`; an empty list prints "no flips".
    extra
        Further (name, value) facts shown as a sentence each (e.g. Kendall's W).
    """
    section = Section(title)
    for name, value in extra:
        section.blocks.append(Paragraph(f"{name}: {value}"))
    if taus:
        section.blocks.append(tau_table(taus, against=against))
    if matrix is not None and len(labels) >= 1:
        cols = list(col_labels) if col_labels is not None else list(labels)
        section.blocks.append(
            Figure(
                f"{slugify(key)}-tau",
                tau_heatmap(labels, cols, matrix, title=f"{title}: Kendall τ between rankings"),
                alt=f"Heatmap of Kendall τ between {len(labels)} rankings.",
                caption="Each cell is the rank correlation of two rankings of the same models.",
            )
        )
    if flips is not None:
        if flips:
            section.blocks.append(rank_flip_table(flips))
        else:
            section.blocks.append(Paragraph("No pair of models changes order."))
    return section
