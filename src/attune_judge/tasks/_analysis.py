"""Cross-task analysis of a bench run: scores, rank sets, τ between task rankings, W.

Everything is a composition of :mod:`attune_judge.calibration` primitives around **one** draw
of conversation weights ``W = bootstrap_weights(C, B, seed)`` over the union of the run's
conversations (sorted by id): every model *and every task* is re-weighted by the same rows of
``W`` (a conversation missing from a task simply has zero counts there), so differences
between models and between tasks keep their covariance.

Per task:

- per-model scores of every metric (ratio estimator ``Σ_c w_c S_cm / Σ_c w_c n_cm``, with
  percentile/BCa intervals from :func:`paired_cluster_bootstrap`); pooled metrics (behaviour
  accuracy, drafting alignment) divide pooled counts, per-unit metrics average units;
- a leaderboard on the task's primary metric: point ranks, simultaneous and marginal
  confidence sets for ranks (Mogstad et al. 2024) on the closed-form cluster-robust
  covariance, bootstrap P(rank = 1);
- behaviour: pooled F1 and MCC per target from re-weighted confusion counts;
- preference: Kendall τ-b of the three responses' win counts per conversation, averaged;
- discriminability: spread of the model scores (max − min), mean interval width, their ratio,
  and the share of model pairs whose paired-difference interval excludes 0.

Across tasks: the matrix of Kendall τ-b between the task rankings with paired intervals
(:func:`kendall_tau_rankings` — its internal draw is the same ``W``, same ``C``, ``B`` and
seed), and Kendall's W of all task rankings with a bootstrap interval.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.calibration import (
    ClusterSums,
    KendallW,
    Metric,
    bootstrap_statistic,
    bootstrap_weights,
    few_clusters_warning,
    kendall_tau_rankings,
    kendalls_w_rankings,
    leaderboard_from_sums,
    paired_cluster_bootstrap,
    ranks_of,
)
from attune_judge.errors import UserError
from attune_judge.runs import (
    BenchBlock,
    BenchBootstrap,
    BenchLeaderboard,
    BenchMetric,
    BenchRow,
    BenchTask,
    Discriminability,
    TauMatrix,
    TauRow,
)
from attune_judge.tasks._behaviour import BEHAVIOUR_TARGETS
from attune_judge.tasks._evaluators import PRIMARY_METRIC
from attune_judge.tasks._metrics import METRIC_BOUNDS, TASK_METRICS, Row
from attune_judge.tasks._preference import kendall_tau_b, win_counts
from attune_judge.tasks._records import TaskRecord

__all__ = ["analyse_records"]


def _sums(rows: Sequence[Row], models: Sequence[str], clusters: Sequence[str]) -> Any:
    ci = {c: i for i, c in enumerate(clusters)}
    mi = {m: j for j, m in enumerate(models)}
    S = np.zeros((len(clusters), len(models)))
    N = np.zeros_like(S)
    for model, conv, num, den in rows:
        S[ci[conv], mi[model]] += num
        N[ci[conv], mi[model]] += den
    return ClusterSums(list(clusters), list(models), S, N)


def _no_data(name: str) -> Metric:
    return Metric(name=name, estimate=None, undefined_reason="no scored units")


def _with_data(sums: Any) -> Any:
    """The columns (models) with at least one scored unit (a model without any would make
    every bootstrap replicate undefined)."""
    keep = [j for j in range(len(sums.labels)) if sums.counts[:, j].sum() > 0]
    return ClusterSums(
        sums.clusters, [sums.labels[j] for j in keep], sums.sums[:, keep], sums.counts[:, keep]
    )


def _ranking(sums: Any, boot: Any, W: Any, seed: int, level: float) -> list[BenchRow]:
    """Leaderboard rows (best first) of the models with a defined score.

    With two or more models and clusters the rows come from
    :func:`~attune_judge.calibration.leaderboard_from_sums` on the run's shared draw ``W``
    (rank sets on the closed-form covariance, bootstrap P(rank = 1)); otherwise point ranks
    only, with the scores of ``boot`` (this table's bootstrap on ``W``).
    """
    theta = sums.estimate
    keep = [j for j in range(len(theta)) if np.isfinite(theta[j])]
    if not keep:
        return []
    cov = np.asarray(boot.covariance_closed_form)[np.ix_(keep, keep)]
    if len(keep) == len(theta) >= 2 and len(sums.clusters) >= 2 and np.all(np.isfinite(cov)):
        board = leaderboard_from_sums(sums, weights=W, seed=seed, level=level, n_draws=20_000)
        return [
            BenchRow(
                model=r.model,
                score=r.score,
                rank=r.rank,
                # a model without a rank claim (no valid interval) shows no rank set
                rank_set_simultaneous=None if r.no_rank_claim else r.rank_set_simultaneous,
                rank_set_marginal=None if r.no_rank_claim else r.rank_set_marginal,
                p_rank_1=r.p_rank_1,
            )
            for r in board.rows
        ]
    ranks = ranks_of(theta[keep])
    rows = [
        BenchRow(model=sums.labels[j], score=boot.means[j], rank=int(ranks[pos]))
        for pos, j in enumerate(keep)
    ]
    rows.sort(key=lambda r: (r.rank, r.model))
    return rows


def _discriminability(boot: Any, level: float) -> Discriminability:
    est = boot.estimates
    keep = [j for j in range(len(est)) if np.isfinite(est[j])]
    widths = [
        boot.means[j].upper - boot.means[j].lower
        for j in keep
        if boot.means[j].upper is not None and boot.means[j].lower is not None
    ]
    spread = float(np.max(est[keep]) - np.min(est[keep])) if keep else None
    width = float(np.mean(widths)) if widths else None
    a = (1 - level) / 2
    separated = pairs = 0
    for x in range(len(keep)):
        for y in range(x + 1, len(keep)):
            d = boot.replicates[:, keep[x]] - boot.replicates[:, keep[y]]
            d = d[np.isfinite(d)]
            if len(d) == 0:
                continue
            pairs += 1
            lo, hi = np.quantile(d, [a, 1 - a])
            separated += bool(lo > 0 or hi < 0)
    return Discriminability(
        spread=spread,
        mean_interval_width=width,
        spread_over_width=spread / width if spread is not None and width else None,
        n_model_pairs=pairs,
        n_pairs_separated=separated,
        share_pairs_separated=separated / pairs if pairs else None,
    )


def _binary_pooled(
    recs: Sequence[TaskRecord], models: Sequence[str], clusters: Sequence[str], **boot: Any
) -> dict[str, dict[str, dict[str, Metric]]]:
    """Behaviour: pooled F1 and MCC per target and model, from re-weighted confusion counts."""
    ci = {c: i for i, c in enumerate(clusters)}
    out: dict[str, dict[str, dict[str, Metric]]] = {}
    for target in BEHAVIOUR_TARGETS:
        out[target] = {}
        for model in models:
            K = np.zeros((len(clusters), 4))  # tp, fp, fn, tn
            for r in recs:
                if r.model == model:
                    K[ci[r.conversation_id]] += [
                        float(r.metrics.get(f"{target}_{k}") or 0) for k in ("tp", "fp", "fn", "tn")
                    ]
            n = int(K.sum())

            def f1(w: Any, K: Any = K) -> Any:
                tp, fp, fn, _ = (w @ K).T
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.where(tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)

            def mcc(w: Any, K: Any = K) -> Any:
                tp, fp, fn, tn = (w @ K).T
                den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.where(den > 0, (tp * tn - fp * fn) / np.sqrt(den), np.nan)

            out[target][model] = {
                name: bootstrap_statistic(fn_, len(clusters), name=f"{target}_{name}", n=n, **boot)
                for name, fn_ in (("f1", f1), ("mcc", mcc))
            }
    return out


def _win_count_tau_rows(recs: Sequence[TaskRecord]) -> list[Row]:
    """Per (model, conversation): τ-b of predicted vs participant win counts (when defined)."""
    groups: dict[tuple[str, str], list[TaskRecord]] = defaultdict(list)
    for r in recs:
        if r.status == "ok":
            groups[(r.model, r.conversation_id)].append(r)
    rows: list[Row] = []
    for (model, conv), rs in groups.items():
        triples = [(r.details["label_a"], r.details["label_b"]) for r in rs]
        true = win_counts(
            [(a, b, r.truth["winner"]) for (a, b), r in zip(triples, rs, strict=True)]
        )
        pred = win_counts(
            [
                (a, b, (r.prediction or {}).get("winner"))
                for (a, b), r in zip(triples, rs, strict=True)
            ]
        )
        tau = kendall_tau_b(pred, true)
        if tau is not None:
            rows.append((model, conv, tau, 1.0))
    return rows


def _kendalls_w(
    task_sums: dict[str, Any], seed: int, B: int, level: float
) -> tuple[KendallW, Metric, list[str]] | None:
    """Kendall's W of the task rankings whose every model score is defined (``None`` when
    fewer than two tasks or models qualify); the draw is the run's shared ``W``."""
    usable = {t: s for t, s in task_sums.items() if np.all(np.isfinite(s.estimate))}
    if len(usable) < 2 or len(next(iter(usable.values())).labels) < 2:
        return None
    res = kendalls_w_rankings(
        {t: usable[t] for t in sorted(usable)}, B=B, seed=seed, level=level, method="percentile"
    )
    return res.point, res.interval, list(res.rankings)


def _task_block(
    task: str,
    recs: Sequence[TaskRecord],
    models: Sequence[str],
    clusters: Sequence[str],
    W: Any,
    *,
    seed: int,
    level: float,
) -> tuple[BenchTask, Any]:
    ok = [r for r in recs if r.status == "ok"]
    counts: dict[str, dict[str, int]] = {m: defaultdict(int) for m in models}
    for r in recs:
        counts[r.model][r.status] += 1
    block = BenchTask(
        primary_metric=PRIMARY_METRIC[task],
        units_by_status={m: dict(c) for m, c in counts.items()},
        metrics={},
    )
    primary_sums = None
    for name, (extract, higher) in TASK_METRICS[task].items():
        rows = [(r.model, r.conversation_id, *v) for r in ok if (v := extract(r)) is not None]
        sums = _sums(rows, models, clusters)
        if not rows:
            block.metrics[name] = BenchMetric(higher_is_better=higher, models={})
            continue
        sums = _with_data(sums)
        boot = paired_cluster_bootstrap(
            sums, weights=W, seed=seed, level=level, bounds=METRIC_BOUNDS.get(name)
        )
        per = dict(zip(sums.labels, boot.means, strict=True))
        block.metrics[name] = BenchMetric(
            higher_is_better=higher, models={m: per.get(m) or _no_data(name) for m in models}
        )
        if name == PRIMARY_METRIC[task]:
            primary_sums = sums
            board = BenchLeaderboard(rows=_ranking(sums, boot, W, seed, level))
            few = few_clusters_warning(len(sums.clusters))
            if few:  # issue 17: below MIN_CLUSTERS no rank claim (sets are [1, p])
                board.warnings, board.rank_claims = [few], False
            block.leaderboard = board
            block.score_label = f"{name} (0–1)"
            block.xlim = (-0.03, 1.03)
            block.discriminability = _discriminability(boot, level)
    boot_kw = {"B": W.shape[0], "seed": seed, "level": level}
    if task == "behaviour" and ok:
        block.pooled_binary = _binary_pooled(ok, models, clusters, **boot_kw)
    if task == "preference":
        rows = _win_count_tau_rows(ok)
        if rows:
            sums = _with_data(_sums(rows, models, clusters))
            boot = paired_cluster_bootstrap(sums, weights=W, seed=seed, level=level, bounds=(-1, 1))
            per = dict(zip(sums.labels, boot.means, strict=True))
            block.win_count_tau = {m: per.get(m) or _no_data("win_count_tau") for m in models}
    return block, primary_sums


def analyse_records(
    records: Sequence[TaskRecord],
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> BenchBlock:
    """The bench analysis (module docstring): the ``bench`` block of the run's summary.

    Parameters
    ----------
    records
        Task records of a run (failed and missing units are counted, not scored).
    models, tasks
        Order of models and tasks in the output (default: as first seen).
    B, seed, level
        Bootstrap replicates, seed of the one shared cluster draw, confidence level.
    """
    models = list(models or dict.fromkeys(r.model for r in records))
    tasks = list(tasks or dict.fromkeys(r.task for r in records))
    clusters = sorted({r.conversation_id for r in records})
    out = BenchBlock(
        bootstrap=BenchBootstrap(
            B=B,
            seed=seed,
            level=level,
            scheme="multinomial",
            n_conversations=len(clusters),
            note="one paired cluster draw over conversations shared by every model and task",
        ),
        models=models,
        tasks={},
    )
    if not clusters or not models:
        return out
    W = bootstrap_weights(len(clusters), B, seed)
    primary: dict[str, Any] = {}
    for task in tasks:
        recs = [r for r in records if r.task == task]
        block, sums = _task_block(task, recs, models, clusters, W, seed=seed, level=level)
        out.tasks[task] = block
        if sums is not None:
            primary[task] = sums
    names = [t for t in tasks if t in primary]
    tau: dict[str, dict[str, Metric]] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            try:
                value = kendall_tau_rankings(primary[a], primary[b], B=B, seed=seed, level=level)
            except UserError as exc:
                value = Metric(
                    name="kendall_tau_b_rankings", estimate=None, undefined_reason=exc.message
                )
            tau.setdefault(a, {})[b] = value
            tau.setdefault(b, {})[a] = value
    out.tau_matrix = TauMatrix(
        labels=names,
        matrix=[[1.0 if a == b else _estimate(tau, a, b) for b in names] for a in names],
    )
    out.tau_intervals = tau
    if names:
        out.against = names[0]
        out.taus = [TauRow(label=b, tau=tau[names[0]][b]) for b in names[1:]]
    w = _kendalls_w(primary, seed, B, level)
    if w is not None:
        out.kendall_w, out.kendall_w_interval, out.kendall_w_tasks = w
    return out


def _estimate(tau: dict[str, dict[str, Metric]], a: str, b: str) -> float | None:
    m = tau.get(a, {}).get(b)
    return None if m is None else m.estimate
