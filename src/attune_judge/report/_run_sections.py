"""Sections about the run itself: failures, tokens and cost; the manifest (what ran)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from attune_judge.report._blocks import Figure, KeyValues, Note, Paragraph, Section, Table, slugify
from attune_judge.report._fig_scores import status_plot
from attune_judge.report._format import fmt_cost, fmt_int, fmt_num, fmt_pct, to_float

__all__ = ["STATUSES", "failures_section", "manifest_section"]

STATUSES = ("ok", "parse_error", "lm_error", "refused", "missing")
"""Judgment statuses in display order (``missing`` = planned, never judged)."""


def _tokens(block: Mapping[str, Any]) -> tuple[int, int, int]:
    t = block.get("tokens") or {}
    return (
        int(t.get("prompt", 0) or 0),
        int(t.get("completion", 0) or 0),
        int(t.get("calls", 0) or 0),
    )


def failures_section(
    models: Mapping[str, Mapping[str, Any]],
    *,
    title: str = "Failures, tokens and cost",
    key: str = "failures",
) -> Section:
    """Per model: judgments by status (table and stacked bars), tokens, cost, latency.

    Parameters
    ----------
    models
        ``{model: block}`` with the runner's per-model fields: ``n_planned``,
        ``n_by_status`` (status → count), ``tokens`` (``prompt``, ``completion``, ``calls``),
        ``cost_usd`` (``None`` = unknown), ``n_cost_known``, ``latency_s_mean``, ``retries``.
        Missing fields show as ``—``.
    title, key
        Heading and figure-name prefix.
    """
    section = Section(title)
    if not models:
        section.blocks.append(Paragraph("Nothing was judged."))
        return section
    names = list(models)
    counts = {
        s: [int((models[m].get("n_by_status") or {}).get(s, 0) or 0) for m in names]
        for s in STATUSES
    }
    cols = [
        "model",
        "planned",
        *STATUSES,
        "failure rate",
        "prompt tokens",
        "completion tokens",
        "LM calls",
        "cost",
        "mean latency (s)",
        "retries",
    ]
    rows = []
    tot = dict.fromkeys(["planned", *STATUSES, "prompt", "completion", "calls", "retries"], 0)
    costs: list[float] = []
    for i, m in enumerate(names):
        b = models[m]
        planned = int(b.get("n_planned") or sum(counts[s][i] for s in STATUSES))
        failed = sum(counts[s][i] for s in STATUSES if s != "ok")
        p, c, calls = _tokens(b)
        cost = to_float(b.get("cost_usd"))
        if cost is not None:
            costs.append(cost)
        rows.append(
            [
                m,
                fmt_int(planned),
                *(fmt_int(counts[s][i]) for s in STATUSES),
                fmt_pct(failed / planned if planned else None),
                fmt_int(p),
                fmt_int(c),
                fmt_int(calls),
                fmt_cost(cost),
                fmt_num(b.get("latency_s_mean"), 2),
                fmt_int(b.get("retries", 0)),
            ]
        )
        tot["planned"] += planned
        for s in STATUSES:
            tot[s] += counts[s][i]
        tot["prompt"] += p
        tot["completion"] += c
        tot["calls"] += calls
        tot["retries"] += int(b.get("retries", 0) or 0)
    failed_all = tot["planned"] - tot["ok"]
    rows.append(
        [
            "all",
            fmt_int(tot["planned"]),
            *(fmt_int(tot[s]) for s in STATUSES),
            fmt_pct(failed_all / tot["planned"] if tot["planned"] else None),
            fmt_int(tot["prompt"]),
            fmt_int(tot["completion"]),
            fmt_int(tot["calls"]),
            fmt_cost(sum(costs)) if costs else "unknown",
            "",
            fmt_int(tot["retries"]),
        ]
    )
    section.blocks.append(
        Table(
            cols,
            rows,
            "l" + "r" * (len(cols) - 1),
            caption=(
                "Every planned judgment is counted under exactly one status; failed judgments "
                "are never scored. Cost is the provider's price where known."
            ),
        )
    )
    unknown = [m for m in names if to_float(models[m].get("cost_usd")) is None]
    if unknown and len(unknown) < len(names):
        section.blocks.append(Note("Cost is unknown for: " + ", ".join(unknown) + "."))
    section.blocks.append(
        Figure(
            f"{slugify(key)}-status",
            status_plot(names, counts, title=f"{title.split(',')[0]}: judgments by status"),
            alt=f"Stacked bars of judgment statuses for {len(names)} models.",
            caption="Green = ok; warm colours = failures; grey = planned but never judged.",
        )
    )
    return section


def _short(value: Any, limit: int = 160) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def manifest_section(manifest: Mapping[str, Any], *, title: str = "What ran") -> Section:
    """The manifest: command, arguments, judges (rubric hash, model), data, versions.

    Parameters
    ----------
    manifest
        ``manifest.json`` as a dict (runner's ``RunManifest``; unknown keys are listed too).
    """
    section = Section(title)
    items: list[tuple[str, str]] = []
    order = [
        "command",
        "created_at",
        "updated_at",
        "invocations",
        "models",
        "seed",
        "n_tasks",
        "data_fingerprint",
    ]
    for k in order:
        if k in manifest and manifest[k] is not None:
            v = manifest[k]
            items.append((k, ", ".join(map(str, v)) if isinstance(v, list) else _short(v)))
    for k, v in (manifest.get("arguments") or {}).items():
        items.append((f"argument {k}", _short(v)))
    for k, v in (manifest.get("versions") or {}).items():
        items.append((f"version {k}", _short(v)))
    skip = {*order, "arguments", "versions", "judges", "rubric_hashes", "inputs"}
    items += [(k, _short(v)) for k, v in manifest.items() if k not in skip]
    section.blocks.append(KeyValues(items))
    judges: Mapping[str, Any] = manifest.get("judges") or {}
    hashes: Mapping[str, Any] = manifest.get("rubric_hashes") or {}
    if judges:
        rows = []
        for jid, spec in judges.items():
            spec = spec if isinstance(spec, Mapping) else {}
            rubric = spec.get("rubric")
            rubric_name = (
                f"{rubric.get('id', '?')}@{rubric.get('version', '?')}"
                if isinstance(rubric, Mapping)
                else str(spec.get("rubric_id") or "—")
            )
            lm = spec.get("lm") or spec.get("model") or "—"
            if isinstance(lm, Mapping):  # lm_spec(): model string plus decoding settings
                decoding = {k: v for k, v in lm.items() if k != "lm" and v is not None}
                lm = str(lm.get("lm", "?")) + (f" {_short(decoding, 60)}" if decoding else "")
            rhash = hashes.get(jid) or (rubric.get("hash") if isinstance(rubric, Mapping) else None)
            rows.append(
                [
                    jid,
                    str(spec.get("program") or spec.get("kind") or "—"),
                    rubric_name,
                    str(rhash or "—"),
                    _short(lm, 100),
                ]
            )
        section.blocks.append(
            Table(
                ["judge id", "program", "rubric", "rubric hash", "model"],
                rows,
                caption="A changed rubric, model or decoding setting is a different judge id.",
            )
        )
    inputs: Mapping[str, Any] = manifest.get("inputs") or {}
    if inputs:
        section.blocks.append(Table(["input", "sha-256"], [[k, str(v)] for k, v in inputs.items()]))
    return section
