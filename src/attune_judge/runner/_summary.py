"""``summary.json``: per judge and model, what was judged, what failed, and the scores.

Everything is computed per ``judge_id`` — judgments of two judges (another rubric, another model)
are never pooled. Within a judge, the models' normalised score means get a *paired* cluster
bootstrap over conversations (every model evaluated on the same resampled conversations): the
judge's one leaderboard (:func:`judge_leaderboard`), whose rows also give each model block its
``score``, so the intervals of two models can be compared honestly and are computed once.
Means are over the ``ok`` judgments only; ``n_ok`` is the n of the mean and every other planned
item is counted under its failure status (or ``missing`` when it was never judged).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration import (
    bootstrap_means,
    few_clusters_warning,
    interval_warnings,
    judgments_scale,
    judgments_to_scores,
    leaderboard,
)
from attune_judge.data import JudgeSpec, Judgment
from attune_judge.errors import UserError
from attune_judge.runner._degenerate import degenerate_judgments
from attune_judge.runner._pairwise_rank import pairwise_ranking
from attune_judge.runner._pairwise_summary import pairwise_block
from attune_judge.runner._panel_summary import panel_blocks
from attune_judge.runner._plan import Task, TaskKey
from attune_judge.runs import (
    DegenerateFinding,
    JudgeBlock,
    MemberTotals,
    ModelBlock,
    PairwiseBlock,
    RunFacts,
    ScoreInterval,
    ScoreSummary,
    Tokens,
    Totals,
)

if TYPE_CHECKING:
    from attune_judge.calibration import Leaderboard

__all__ = ["SUMMARY_STATUSES", "judge_leaderboard", "summarize"]

SUMMARY_STATUSES = ("ok", "parse_error", "lm_error", "refused", "missing")
"""Every planned task is counted under exactly one of these."""


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def judge_leaderboard(
    ok: Sequence[Judgment],
    *,
    seed: int,
    B: int,
    level: float,
    field: Literal["normalized", "overall"] = "normalized",
    scale: tuple[float, float] | None = None,
) -> Leaderboard | None:
    """The one leaderboard of a judge: its models' scores with intervals and rank sets.

    ``ok`` are the judge's effective judgments (the last of each item, see
    :func:`~attune_judge.runner.effective_judgments`); only ``ok`` ones with a score count,
    the cluster is the conversation. The intervals stay on the scores' scale: ``scale``, else
    the one the judgments record (:func:`~attune_judge.calibration.judgments_scale`; a
    warning when they record none). ``None`` with fewer than two models, or when the scores
    come from fewer than two conversations. The runner stores it in ``summary.json``; ``rank
    RUN`` with other settings calls this again on the same judgments.
    """
    named = {j.candidate_model for j in ok if j.status == "ok" and getattr(j, field) is not None}
    if len(named - {None}) < 2:
        return None  # (before importing the statistics: an interrupted run stops at once)

    models, clusters, scores = judgments_to_scores(ok, field=field)
    if not scores:
        return None
    bounds = scale or judgments_scale(ok, field)
    try:
        board = leaderboard(models, clusters, scores, B=B, seed=seed, level=level, bounds=bounds)
    except UserError:
        return None
    if bounds is None and len(set(scores)) > 1:
        board.warnings.append(
            f"the {field} scores' scale is not recorded in the judgments (no normalized "
            "score beside them, or criteria on different scales): the intervals are not "
            "bounded to it; give --scale LOW,HIGH"
        )
    return board


def _interval(metric: Any, n: int, n_clusters: int) -> ScoreInterval:
    return ScoreInterval(
        mean=metric.estimate,
        lower=metric.lower,
        upper=metric.upper,
        level=metric.level,
        method=f"paired cluster bootstrap over conversations ({metric.method})",
        B=metric.B,
        seed=metric.seed,
        n=n,
        n_conversations=n_clusters,
        note=metric.note,
    )


def _score_intervals(
    board: Leaderboard | None, ok: Sequence[Judgment], *, seed: int, B: int, level: float
) -> tuple[dict[str, ScoreInterval], list[str]]:
    """Per model: its leaderboard row's mean and interval (no second bootstrap; for scores on
    [0, 1] see ``calibration._bounded``); without a leaderboard (one model, or one
    conversation) the model's own cluster-bootstrap interval. And the warnings about them
    (scores that are not finite, too few conversations, every score at a bound, zero-width
    intervals)."""
    rows = [(j.candidate_model or "", j.conversation_id or j.item_id, j.normalized) for j in ok]
    rows_f = [(m, c, float(v)) for m, c, v in rows if v is not None and math.isfinite(v)]
    bad: dict[str, int] = defaultdict(int)
    for m, _, v in rows:
        if v is not None and not math.isfinite(v):
            bad[m] += 1
    warnings = [f"{m}: {k} score(s) not finite, left out" for m, k in sorted(bad.items())]
    if not rows_f:
        return {}, warnings

    few = few_clusters_warning(len({c for _, c, _ in rows_f}))
    warnings += [few] if few else []
    if board is not None:
        warnings += interval_warnings([r.score for r in board.rows])
        return {r.model: _interval(r.score, r.n, r.n_clusters) for r in board.rows}, warnings
    res = bootstrap_means(
        [v for _, _, v in rows_f],
        [c for _, c, _ in rows_f],
        [m for m, _, _ in rows_f],
        B=B,
        seed=seed,
        level=level,
        bounds=(0.0, 1.0),
    )
    warnings += interval_warnings(res.means)
    return {
        str(label): _interval(m, m.n, m.n_clusters)
        for label, m in zip(res.labels, res.means, strict=True)
    }, warnings


def _add_ranking(
    block: dict[str, Any], ok: Sequence[Judgment], *, seed: int, B: int, level: float
) -> None:
    """The Bradley–Terry rankings of the compared options (``rankings``: one per group of
    options compared with each other), or why there is none (``ranking_note``)."""
    try:
        rankings = pairwise_ranking(ok, B=B, seed=seed, level=level)
    except UserError as exc:
        block["ranking_note"] = str(exc)
    else:
        block["rankings"] = [r.as_json() for r in rankings]
        block["ranking_settings"] = {"B": B, "seed": seed, "level": level}


def _model_block(planned: int, judgments: Sequence[Judgment]) -> ModelBlock:
    counts = dict.fromkeys(SUMMARY_STATUSES, 0)
    for j in judgments:
        counts[j.status] += 1
    counts["missing"] = planned - len(judgments)
    ok = [j for j in judgments if j.status == "ok"]
    criteria: dict[str, list[float]] = defaultdict(list)
    for j in ok:
        for name, value in j.scores.items():
            criteria[name].append(value)
    costs = [j.cost for j in judgments if j.cost is not None]
    # a jury with an unpriced member: its priced members' part is known all the same
    partial = [
        float(j.details["cost_known"])
        for j in judgments
        if j.cost is None and isinstance(j.details.get("cost_known"), int | float)
    ]
    latencies = [j.latency_s for j in judgments if j.latency_s is not None]
    requests = [
        float(j.details["request_s"])
        for j in judgments
        if isinstance(j.details.get("request_s"), int | float)
    ]
    queues = [
        float(j.details["queue_s"])
        for j in judgments
        if isinstance(j.details.get("queue_s"), int | float)
    ]
    return ModelBlock(
        n_planned=planned,
        n_judged=len(judgments),
        n_ok=counts["ok"],
        n_by_status=counts,
        score=None,
        overall_mean=_mean([j.overall for j in ok if j.overall is not None]),
        criteria_means={k: _mean(v) for k, v in sorted(criteria.items())},
        tokens=Tokens(
            prompt=sum(j.usage.prompt_tokens for j in judgments),
            completion=sum(j.usage.completion_tokens for j in judgments),
            calls=sum(j.usage.calls for j in judgments),
        ),
        cost_usd=math.fsum(costs) if costs and len(costs) == len(judgments) else None,
        cost_usd_known=math.fsum(costs + partial) if costs or partial else None,
        n_cost_known=len(costs),
        latency_s_mean=_mean(latencies),
        request_s_mean=_mean(requests),
        queue_s_mean=_mean(queues),
        retries=sum(max(0, int(j.details.get("attempts", 1)) - 1) for j in judgments),
    )


def summarize(
    tasks: Iterable[Task],
    judgments: Mapping[TaskKey, Judgment],
    *,
    seed: int = 0,
    B: int = DEFAULT_B,
    level: float = DEFAULT_LEVEL,
    run_info: Mapping[str, Any] | None = None,
) -> ScoreSummary:
    """Aggregate the effective judgments of the planned tasks.

    Parameters
    ----------
    tasks
        The run's plan; judgments of keys outside it are ignored.
    judgments
        The effective (last) judgment per ``(item_id, judge_id)``.
    seed, B, level
        Bootstrap seed, replicates and confidence level.
    run_info
        Extra run-level facts to include under ``run`` (wall time, stop reason, ...).

    Returns
    -------
    ScoreSummary
        ``run`` facts and a :class:`~attune_judge.runs.JudgeBlock` per judge: a model block
        each and the judge's one leaderboard with rank sets when two or more models have ok
        scores (the report and ``rank`` read it instead of bootstrapping again), or a
        pairwise judge's block; ``panels`` when judges can be compared.
    """
    planned: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    found: dict[str, dict[str, list[Judgment]]] = defaultdict(lambda: defaultdict(list))
    labels: dict[str, str] = {}
    specs: dict[str, JudgeSpec] = {}
    candidate_models: dict[str, str | None] = {}
    options: dict[str, tuple[str, str]] = {}
    n_tasks = 0
    for task in tasks:
        n_tasks += 1
        jid, model = task.judge.judge_id, task.item.candidate_model
        planned[jid][model] += 1
        if "other" in task.item.metadata:
            meta = task.item.metadata
            options[task.item.item_id] = (
                str(meta.get("option_a", "A")),
                str(meta.get("option_b", "B")),
            )
        labels.setdefault(jid, JudgeSpec.of(task.judge.spec).label())
        specs.setdefault(jid, JudgeSpec.of(task.judge.spec))
        candidate_models[task.item.item_id] = task.item.candidate_model
        j = judgments.get(task.key)
        if j is not None:
            found[jid][model].append(j)
    judges_out: dict[str, JudgeBlock] = {}
    totals = dict.fromkeys(SUMMARY_STATUSES, 0)
    for jid, per_model in planned.items():
        models: dict[str, ModelBlock] = {}
        ok_all: list[Judgment] = []
        for model, n_planned in per_model.items():
            block = models[model] = _model_block(n_planned, found[jid][model])
            for status in SUMMARY_STATUSES:
                totals[status] += block.n_by_status[status]
            ok_all.extend(j for j in found[jid][model] if j.status == "ok")
        judge = judges_out[jid] = JudgeBlock(
            label=labels[jid],
            models=models,
            totals=_totals(models.values()),
            # a bench evaluator's "scores" are task metrics (0/1 correct, ...), not a judge's
            # answers: a constant metric is a result, bench checks its drafting judge itself
            degenerate=[]
            if specs[jid].program.startswith("bench-")
            else [DegenerateFinding.model_validate(f) for f in degenerate_judgments(ok_all)],
        )
        pairwise = pairwise_block(ok_all, options, seed=seed, B=B, level=level)
        if pairwise is not None:
            # a pairwise judge's score is whether the first-listed reply won: no per-model
            # means and no leaderboard; its verdicts rank the options (Bradley–Terry) instead
            _add_ranking(pairwise, ok_all, seed=seed, B=B, level=level)
            judge.pairwise = PairwiseBlock.model_validate(pairwise)
            few = few_clusters_warning(len({j.conversation_id or j.item_id for j in ok_all}))
            judge.warnings = [few] if few else []  # its position-bias intervals
        else:
            finite = [j for j in ok_all if j.normalized is None or math.isfinite(j.normalized)]
            board = judge_leaderboard(finite, seed=seed, B=B, level=level)
            intervals, warnings = _score_intervals(board, ok_all, seed=seed, B=B, level=level)
            for model, interval in intervals.items():
                if model in models:
                    models[model].score = interval
            if warnings:
                judge.warnings = warnings
            if board is not None:
                judge.leaderboard = board
        members = _member_totals(specs[jid], [j for per in found[jid].values() for j in per])
        if members:
            judge.members = members
    # complete: every planned judgment is there, and the run scored something
    complete = totals["missing"] == 0 and (n_tasks == 0 or totals.get("ok", 0) > 0)
    every_model = [b for judge in judges_out.values() for b in judge.models.values()]
    run = RunFacts(
        n_tasks=n_tasks,
        n_by_status=totals,
        complete=complete,
        totals=_totals(every_model),
        **(run_info or {}),
    )
    summary = ScoreSummary(run=run, judges=judges_out)
    ok_by_judge = {
        jid: [j for per in found[jid].values() for j in per if j.status == "ok"] for jid in found
    }
    panels = panel_blocks(specs, ok_by_judge, candidate_models, seed=seed, B=B, level=level)
    if panels:
        summary.panels = panels
    return summary


def _member_totals(spec: JudgeSpec, judgments: Sequence[Judgment]) -> dict[str, MemberTotals]:
    """A jury's tokens and cost summed per member model (over all its judgments, every
    status: a failed member's calls were made too); ``{}`` for a judge that is not a jury.

    A member's cost is the one the runner priced into its entry of ``details["members"]``;
    ``cost_usd`` is ``None`` ("unknown") unless every one of its entries has a cost."""
    if not spec.is_jury:
        return {}

    names: dict[str, str] = {}
    for member in spec.members or []:
        server = member.server()
        names[member.judge_id()] = str(member.model_name() or member.judge_id()) + (
            f"@{server}" if server else ""
        )
    tokens = {name: [0, 0, 0] for name in names.values()}  # prompt, completion, calls
    judged: dict[str, int] = dict.fromkeys(names.values(), 0)
    costs: dict[str, list[float]] = {name: [] for name in names.values()}
    for j in judgments:
        for entry in j.details.get("members") or []:
            name = names.get(str(entry.get("judge_id")))
            if name is None:
                continue
            usage = entry.get("usage") or {}
            for n, key in enumerate(("prompt_tokens", "completion_tokens", "calls")):
                tokens[name][n] += int(usage.get(key) or 0)
            judged[name] += 1
            if isinstance(entry.get("cost"), int | float):
                costs[name].append(float(entry["cost"]))
    return {
        name: MemberTotals(
            judge_id=jid,
            tokens=Tokens(
                prompt=tokens[name][0], completion=tokens[name][1], calls=tokens[name][2]
            ),
            n_judged=judged[name],
            n_cost_known=len(costs[name]),
            cost_usd=math.fsum(costs[name])
            if judged[name] and len(costs[name]) == judged[name]
            else None,
            cost_usd_known=math.fsum(costs[name]) if costs[name] else None,
        )
        for jid, name in names.items()
    }


def _totals(blocks: Iterable[ModelBlock]) -> Totals:
    """Tokens, calls and cost summed over model blocks; cost ``None`` when any is unknown."""
    blocks = list(blocks)
    known = [b.cost_usd_known for b in blocks if b.cost_usd_known is not None]
    return Totals(
        tokens=Tokens(
            prompt=sum(b.tokens.prompt for b in blocks),
            completion=sum(b.tokens.completion for b in blocks),
            calls=sum(b.tokens.calls for b in blocks),
        ),
        cost_usd=math.fsum(known)
        if blocks and all(b.n_cost_known == b.n_judged for b in blocks)
        else None,
        cost_usd_known=math.fsum(known) if known else None,
        n_cost_known=sum(b.n_cost_known for b in blocks),
        n_judged=sum(b.n_judged for b in blocks),
    )
