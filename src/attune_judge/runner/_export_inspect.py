"""A run's judgments as an Inspect AI log (``attune-judge export RUN --format inspect``).

The log is built from Inspect's own records (``EvalLog``, ``EvalSample``, ``Score``) and
written with Inspect's ``write_eval_log`` (``.eval``, or ``.json`` by the file name), so
``inspect view`` opens it: one sample per judged item (id = the item id), its input the item's
conversation, its output the judged reply, its target the reference; one score per judge
(named by the judge's label; the value is the judgment's ``normalized`` score, else its
``overall``, or a pairwise verdict ``A``/``B``/``tie``/``inconsistent``; the explanation its
rationale; criteria scores, status and judge id in the score's metadata). A failed judgment is
no score: it is listed in the sample's metadata (``attune_judge_failed``).

The conversations come from the run's inputs as its manifest records them (a ``score`` run's
DATA and candidates), read again only when their fingerprint is still the run's; otherwise the
samples carry the item id and a note instead of the conversation.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attune_judge._version import __version__
from attune_judge.data import JudgeItem, Judgment
from attune_judge.data.adapters import inspect_log_api
from attune_judge.errors import UserError
from attune_judge.runner._inputs import fingerprint_inputs, load_judge_items
from attune_judge.runs import CommandManifest, JudgedSummary, RunManifest, RunSummary


@dataclass(frozen=True)
class _Run:
    path: Path
    manifest: RunManifest | CommandManifest | None
    summary: RunSummary | None


__all__ = ["write_inspect_log"]


def _run_items(data: _Run) -> tuple[dict[str, JudgeItem], str | None]:
    """The run's items by id, or why they are not available."""
    manifest = data.manifest
    if not isinstance(manifest, RunManifest) or manifest.command != "score":
        return {}, "only a score run's manifest names the items' conversations"
    args = manifest.arguments
    source, candidates = args.get("data"), args.get("candidates")
    if not source:
        return {}, "the manifest names no data"
    paths = [Path(source)] + ([Path(candidates)] if candidates else [])
    try:
        fingerprint, _ = fingerprint_inputs(list(dict.fromkeys(paths)))
        if fingerprint != manifest.data_fingerprint:
            return {}, f"{source}: changed since the run (its fingerprint differs)"
        items = load_judge_items(
            Path(source),
            candidates=Path(candidates) if candidates else None,
            models=args.get("models"),
        )
    except UserError as exc:
        return {}, f"the run's inputs cannot be read again: {exc.message}"
    return {it.item_id: it for it in items}, None


def _labels(data: _Run, judge_ids: Sequence[str]) -> dict[str, str]:
    """Judge id → score name: the judge's label when it is unique, else the judge id."""
    summary = data.summary
    label = {}
    if isinstance(summary, JudgedSummary):
        label = {jid: block.label or jid for jid, block in summary.judges.items()}
    names = {jid: label.get(jid, jid) for jid in judge_ids}
    counts: dict[str, int] = {}
    for n in names.values():
        counts[n] = counts.get(n, 0) + 1
    return {jid: n if counts[n] == 1 else jid for jid, n in names.items()}


def _value(j: Judgment) -> float | str | None:
    if j.verdict is not None:
        return j.verdict
    value = j.normalized if j.normalized is not None else j.overall
    return None if value is None or not math.isfinite(value) else value


def _messages(item: JudgeItem | None, note: str | None) -> Any:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

    if item is None:
        return f"(conversation not available: {note})"
    kinds = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
        "assistant": ChatMessageAssistant,
    }
    return [kinds[m.role](content=m.content) for m in item.context] or item.candidate


def write_inspect_log(
    run_dir: Path,
    manifest: RunManifest | CommandManifest | None,
    summary: RunSummary | None,
    judgments: Sequence[Judgment],
    out: Path,
) -> int:
    """Write a run (its directory, manifest, summary and current judgments, as
    :func:`attune_judge.runner.load_run` reads them) as an Inspect log at ``out`` (``.eval`` or
    ``.json``); return the number of samples.

    Raises
    ------
    UserError
        The ``inspect`` extra is not installed; ``out`` is not ``.eval`` or ``.json``; the run
        has no judgment.
    """
    log_api = inspect_log_api()
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    if out.suffix not in (".eval", ".json"):
        raise UserError(f"{out}: an Inspect log is a .eval or .json file")
    if not judgments:
        raise UserError(f"{run_dir}: the run has no judgment to export")
    data = _Run(run_dir, manifest, summary)
    items, note = _run_items(data)
    by_item: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_item.setdefault(j.item_id, []).append(j)
    names = _labels(data, sorted({j.judge_id for j in judgments}))
    samples = []
    values: dict[str, list[float]] = {n: [] for n in names.values()}
    for item_id, judgments in by_item.items():
        item = items.get(item_id)
        scores: dict[str, Any] = {}
        failed: dict[str, str] = {}
        for j in judgments:
            name, value = names[j.judge_id], _value(j)
            if j.status != "ok" or value is None:
                failed[name] = f"{j.status}: {j.error or 'no score'}"
                continue
            scores[name] = Score(
                value=value,
                explanation=j.rationale,
                metadata={
                    "judge_id": j.judge_id,
                    "status": j.status,
                    "overall": j.overall,
                    "normalized": j.normalized,
                    "criteria": dict(j.scores),
                },
            )
            if isinstance(value, float | int):
                values[name].append(float(value))
        first = judgments[0]
        model = first.candidate_model or "unknown"
        metadata: dict[str, Any] = {
            "conversation_id": first.conversation_id,
            "candidate_model": first.candidate_model,
        }
        if failed:
            metadata["attune_judge_failed"] = failed
        samples.append(
            log_api.EvalSample(
                id=item_id,
                epoch=1,
                input=_messages(item, note),
                target=(item.reference or "") if item is not None else "",
                output=ModelOutput.from_content(model=model, content=item.candidate)
                if item is not None
                else ModelOutput(model=model),
                scores=scores or None,
                metadata=metadata,
            )
        )
    log = _eval_log(log_api, data, samples, values)
    tmp = out.with_name(out.stem + ".tmp" + out.suffix)
    out.parent.mkdir(parents=True, exist_ok=True)
    log_api.write_eval_log(log, str(tmp))
    tmp.replace(out)
    return len(samples)


def _eval_log(log_api: Any, data: _Run, samples: list[Any], values: dict[str, list[float]]) -> Any:
    models = sorted({s.output.model for s in samples})
    summary = data.summary
    complete = isinstance(summary, JudgedSummary) and summary.run.complete
    command = data.manifest.command if data.manifest is not None else "run"
    scores = [
        log_api.EvalScore(
            name=name,
            scorer=name,
            scored_samples=len(vals),
            metrics={"mean": log_api.EvalMetric(name="mean", value=statistics.fmean(vals))}
            if vals
            else {},
        )
        for name, vals in values.items()
    ]
    return log_api.EvalLog(
        status="success" if complete else "started",
        eval=log_api.EvalSpec(
            created=datetime.now(UTC).isoformat(),
            task=f"attune-judge {command}",
            dataset=log_api.EvalDataset(
                name=data.path.name,
                location=str(data.path),
                samples=len(samples),
                sample_ids=[s.id for s in samples],
            ),
            model=models[0] if len(models) == 1 else ", ".join(models),
            config=log_api.EvalConfig(),
            packages={"attune_judge": __version__},
            metadata={"attune_judge_run": str(data.path), "candidate_models": models},
        ),
        results=log_api.EvalResults(
            total_samples=len(samples), completed_samples=len(samples), scores=scores
        ),
        samples=samples,
    )
