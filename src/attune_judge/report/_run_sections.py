"""Sections about the run itself: failures, tokens and cost; the manifest (what ran)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from attune_judge.report._blocks import Figure, KeyValues, Note, Paragraph, Section, Table, slugify
from attune_judge.report._fig_scores import status_plot
from attune_judge.report._format import fmt_cost, fmt_int, fmt_num, fmt_pct
from attune_judge.runs import (
    CommandManifest,
    JudgeBlock,
    MemberTotals,
    ModelBlock,
    RunManifest,
    Tokens,
)

__all__ = [
    "STATUSES",
    "failures_section",
    "judges_failures_section",
    "manifest_section",
    "members_section",
]

STATUSES = ("ok", "parse_error", "lm_error", "refused", "missing")
"""Judgment statuses in display order (``missing`` = planned, never judged)."""


def _tokens(block: ModelBlock | MemberTotals) -> tuple[int, int, int]:
    return block.tokens.prompt, block.tokens.completion, block.tokens.calls


def _status_table(
    names: list[str], counts: dict[str, list[int]], planned: list[int], row_label: str
) -> Table:
    rows = []
    for i, m in enumerate(names):
        not_ok = planned[i] - counts["ok"][i]
        rows.append(
            [
                m,
                fmt_int(planned[i]),
                *(fmt_int(counts[s][i]) for s in STATUSES),
                fmt_pct(not_ok / planned[i] if planned[i] else None),
            ]
        )
    total = sum(planned)
    ok = sum(counts["ok"])
    rows.append(
        [
            "all",
            fmt_int(total),
            *(fmt_int(sum(counts[s])) for s in STATUSES),
            fmt_pct((total - ok) / total if total else None),
        ]
    )
    return Table(
        [row_label, "planned", *STATUSES, "not ok"],
        rows,
        "l" + "r" * (len(STATUSES) + 2),
        caption=(
            "Every planned judgment is counted under exactly one status (missing = planned, "
            "never judged); only ok judgments are scored, failures are never counted as zeros."
        ),
    )


def _usage_table(models: Mapping[str, ModelBlock], names: list[str], row_label: str) -> Table:
    rows = []
    tot = [0, 0, 0, 0]
    costs: list[float] = []
    for m in names:
        b = models[m]
        p, c, calls = _tokens(b)
        retries, cost = b.retries, b.cost_usd
        if cost is not None:
            costs.append(cost)
        tot = [tot[0] + calls, tot[1] + p, tot[2] + c, tot[3] + retries]
        rows.append(
            [
                m,
                fmt_int(calls),
                fmt_int(p),
                fmt_int(c),
                fmt_cost(cost),
                fmt_num(b.request_s_mean, 2),
                fmt_num(b.latency_s_mean, 2),
                fmt_int(retries),
            ]
        )
    rows.append(
        [
            "all",
            *(fmt_int(v) for v in tot[:3]),
            fmt_cost(sum(costs)) if costs and len(costs) == len(names) else "unknown",
            "",
            "",
            fmt_int(tot[3]),
        ]
    )
    return Table(
        [
            row_label,
            "LM calls",
            "prompt tokens",
            "completion tokens",
            "cost",
            "mean request (s)",
            "mean latency incl. queue (s)",
            "retries",
        ],
        rows,
        "lrrrrrrr",
        caption=(
            "Cost is the provider's price where known ('unknown' otherwise, never $0; "
            "--price-in/--price-out give prices for other models). Request: the model calls "
            "themselves; latency: from the first attempt to the last, with retries, backoff "
            "and waiting for a shared model."
        ),
    )


def failures_section(
    models: Mapping[str, ModelBlock],
    *,
    title: str = "Failures, tokens and cost",
    key: str = "failures",
    order: list[str] | None = None,
    row_label: str = "model",
) -> Section:
    """Per model: judgments by status (table and stacked bars), tokens, cost, latency.

    Parameters
    ----------
    models
        ``{model: ModelBlock}``: ``n_planned``, ``n_by_status`` (status → count), ``tokens``,
        ``cost_usd`` (``None`` = unknown), ``latency_s_mean``, ``retries``.
    title, key
        Heading and figure-name prefix.
    order
        Row order (default: the mapping's order); unknown names are ignored.
    row_label
        What a row is (``model``, ``judge``).
    """
    section = Section(title)
    if not models:
        section.blocks.append(Paragraph("Nothing was judged."))
        return section
    names = [m for m in (order or []) if m in models]
    names += [m for m in models if m not in names]
    counts = {s: [models[m].n_by_status.get(s, 0) for m in names] for s in STATUSES}
    planned = [
        models[m].n_planned or sum(counts[s][i] for s in STATUSES) for i, m in enumerate(names)
    ]
    section.blocks.append(_status_table(names, counts, planned, row_label))
    section.blocks.append(
        Figure(
            f"{slugify(key)}-status",
            status_plot(names, counts, title="Judgments by status"),
            alt=f"Stacked bars of judgment statuses for {len(names)} {row_label}s.",
            caption="Green = ok; warm colours = failures; grey = planned but never judged.",
        )
    )
    section.blocks.append(_usage_table(models, names, row_label))
    unknown = [m for m in names if models[m].cost_usd is None]
    if unknown and len(unknown) < len(names):
        section.blocks.append(Note("Cost is unknown for: " + ", ".join(unknown) + "."))
    return section


def members_section(members: Mapping[str, MemberTotals]) -> Section | None:
    """A jury's tokens and cost per member model (its judge block's ``members``)."""
    if not members:
        return None
    rows = []
    for name, b in members.items():
        p, c, calls = _tokens(b)
        cost = fmt_cost(b.cost_usd)
        rows.append([name, fmt_int(b.n_judged), fmt_int(calls), fmt_int(p), fmt_int(c), cost])
    return Section(
        "Jury members: tokens and cost",
        [
            Table(
                [
                    "member model",
                    "judgments",
                    "LM calls",
                    "prompt tokens",
                    "completion tokens",
                    "cost",
                ],
                rows,
                "lrrrrr",
                caption=(
                    "Each member's own calls, summed over the jury's judgments (failed ones "
                    "too), at its own model's price; the jury's cost above is their sum."
                ),
            )
        ],
    )


def _short(value: Any, limit: int = 160) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


_MANIFEST_FACTS = "command created_at updated_at invocations models seed n_tasks data_fingerprint"


def manifest_section(
    manifest: RunManifest | CommandManifest, *, title: str = "What ran"
) -> Section:
    """The manifest: command, arguments, versions and, for a run of judges, the judges (rubric,
    rubric hash, model) and the inputs' hashes."""
    section = Section(title)
    items: list[tuple[str, str]] = []
    for k in _MANIFEST_FACTS.split():
        v = getattr(manifest, k, None)
        if v is not None:
            items.append((k, ", ".join(map(str, v)) if isinstance(v, list) else _short(v)))
    items += [(f"argument {k}", _short(v)) for k, v in manifest.arguments.items()]
    items += [(f"version {k}", _short(v)) for k, v in manifest.versions.items()]
    section.blocks.append(KeyValues(items))
    if not isinstance(manifest, RunManifest):
        return section
    rows = []
    for jid, spec in manifest.judges.items():
        lm = spec.model_name() or spec.model or "—"
        if spec.lm is not None and not isinstance(spec.lm, str):  # model plus decoding
            decoding = {
                k: v for k, v in spec.lm.model_dump().items() if k != "lm" and v is not None
            }
            lm = f"{lm}" + (f" {_short(decoding, 60)}" if decoding else "")
        rubric_name = spec.rubric_name() or "—"
        rhash = manifest.rubric_hashes.get(jid) or (spec.rubric or {}).get("hash")
        extra = spec.model_extra or {}
        program = spec.program if "program" in spec.model_dump() else extra.get("kind") or "—"
        rows.append([jid, program, rubric_name, str(rhash or "—"), _short(lm, 100)])
    if rows:
        section.blocks.append(
            Table(
                ["judge id", "program", "rubric", "rubric hash", "model"],
                rows,
                caption="A changed rubric, model or decoding setting is a different judge id.",
            )
        )
    if manifest.inputs:
        rows = [[k, v] for k, v in manifest.inputs.items()]
        section.blocks.append(Table(["input", "sha-256"], rows))
    return section


def _sum_models(block: JudgeBlock) -> ModelBlock:
    """One model block summing all models of a judge."""
    models = block.models.values()
    counts = {s: sum(m.n_by_status.get(s, 0) for m in models) for s in STATUSES}
    costs = [m.cost_usd for m in models if m.cost_usd is not None]
    return ModelBlock(
        n_planned=sum(m.n_planned for m in models),
        n_judged=sum(m.n_judged for m in models),
        n_ok=counts["ok"],
        n_by_status=counts,
        tokens=Tokens(
            prompt=sum(m.tokens.prompt for m in models),
            completion=sum(m.tokens.completion for m in models),
            calls=sum(m.tokens.calls for m in models),
        ),
        cost_usd=sum(costs) if costs else None,
        retries=sum(m.retries for m in models),
    )


def judges_failures_section(
    judges: Mapping[str, JudgeBlock],
    *,
    names: Mapping[str, str] | None = None,
    title: str = "Judgments: failures, tokens and cost",
    key: str = "judges",
) -> Section:
    """Failures, tokens and cost per judge (all models summed), for runs with many judges.

    Parameters
    ----------
    judges
        The runner's judge blocks (``JudgedSummary.judges``).
    names
        Display name per judge id (e.g. the variants that used it); default the label.
    """
    rows = {}
    for jid, block in judges.items():
        name = (names or {}).get(jid) or block.label or jid
        rows[f"{name} ({jid})"] = _sum_models(block)
    section = failures_section(rows, title=title, key=key, row_label="judge")
    section.blocks.insert(
        0, Paragraph("One row per judge (a rubric variant or judge model), all models summed.")
    )
    return section
