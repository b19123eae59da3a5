"""``attune-judge bench``: run the AttuneBench tasks for several models into a run directory.

Plan: for every evaluated model and task, one :class:`TaskEvaluator` (a Judge) and the task's
units (:func:`task_units`); the runner's :func:`~attune_judge.runner.run_tasks` executes them
with its concurrency, retries, failure budget, append-only ``judgments.jsonl`` and resume
(finished units are skipped; a directory holding another run is refused). DSPy's request cache
(``ATTUNE_CACHE_DIR``) sits underneath, so a re-run of finished work makes no LM call.

After each invocation the run directory also gets ``records.jsonl`` (one :class:`TaskRecord`
per planned unit), ``summary.json`` (``kind: "bench"``: the runner's run facts plus
:func:`analyse_records`). The full report (``report.md`` / ``report.html`` with figures and
the bench sections) is not written here, as ``tasks`` sits below the report package:
``attune-judge bench`` writes it afterwards with the report package's one renderer
(``attune_judge.report.write_report(result.run_dir)``; call it yourself after
:func:`run_bench`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from attune_judge._bootstrap import DEFAULT_B, Replicates
from attune_judge.data import Judgment, load_attunebench, write_jsonl
from attune_judge.errors import UserError
from attune_judge.lm import (
    LMSettings,
    parse_model_spec,
    resolve_lm,
)
from attune_judge.runner import (
    FailureBudget,
    RunDir,
    Task,
    config_executor,
    degenerate_findings,
    effective_judgments,
    fingerprint_inputs,
    run_arguments,
    run_tasks,
)
from attune_judge.runner._execution import ExecutionFields
from attune_judge.runner._panel_summary import panel_blocks
from attune_judge.runs import BenchSummary, JudgedSummary, RunSummary
from attune_judge.tasks._analysis import analyse_records
from attune_judge.tasks._evaluators import TaskEvaluator
from attune_judge.tasks._items import TASKS, TaskName, task_units
from attune_judge.tasks._records import record_from_judgment

if TYPE_CHECKING:
    import dspy

__all__ = ["BenchConfig", "BenchResult", "bench_evaluators", "parse_model_spec", "run_bench"]


class BenchConfig(ExecutionFields):
    """The arguments of ``attune-judge bench``."""

    model_config = ConfigDict(extra="forbid")

    data: Path
    """AttuneBench data (folder of conversation files, one .json, or a .jsonl)."""
    models: list[str] = Field(min_length=1)
    """Evaluated models (``MODEL[@temperature=..,seed=..,max_tokens=..,api_base=..]``)."""
    judge_lm: str | list[str] = "local"
    """Model of the drafting judges (reference + behaviour), or several: a jury (every
    member's judgment kept; the behaviour answers combine by majority)."""
    jury: Literal["mean", "median", "majority"] = "mean"
    """How several judge models' draft scores combine."""
    out: Path
    """The run directory."""
    tasks: list[TaskName] = Field(default_factory=lambda: list(TASKS))
    """Tasks to run."""
    seed: int = 0
    """Seed of the A/B presentation order and of the bootstrap."""
    lm_settings: LMSettings = LMSettings()
    """Server, decoding, timeout and cache of every model (judge and evaluated; its own
    ``lm`` and ``seed`` are not used); a model's own ``@temperature=..`` settings override
    them, and its ``api_base`` applies to ``openai/`` models without their own."""
    max_conversations: int | None = None
    """Use only the first N conversations (by file order)."""
    B: Replicates = DEFAULT_B
    """Bootstrap replicates of the analysis (the same name and default as every command's)."""
    max_failure_rate: float = 0.25
    """Stop when more than this share of units fails (after 20)."""
    quiet: bool = True
    """No progress bar."""
    retry_failed: bool = False
    """Evaluate again only the failed units of the existing run directory
    (``--retry-failed``)."""


class BenchResult(BaseModel):
    """What a bench invocation did."""

    model_config = ConfigDict(extra="forbid")

    run_dir: Path
    """The run directory."""
    n_units: int
    """Planned units (all models and tasks)."""
    n_skipped: int
    """Units already finished before this invocation."""
    n_run: int
    """Units evaluated by this invocation."""
    stopped: str | None = None
    """Why the run stopped early, if it did."""
    summary: SerializeAsAny[RunSummary]
    """``summary.json``, typed: a :class:`~attune_judge.runs.BenchSummary` (the runner's
    judges' summary when the run stopped before its analysis)."""

    @property
    def exit_code(self) -> int:
        """0, or 3 when the failure budget stopped the run."""
        return 3 if self.stopped else 0


def _resolve(spec: str, settings: LMSettings) -> dspy.BaseLM:
    """The model ``spec`` (``MODEL@key=value,...``) with ``settings``; no seed: the models
    sample as they do."""
    api_base = settings.api_base if spec.startswith("openai/") else None
    return resolve_lm(settings.model_copy(update={"lm": spec, "api_base": api_base, "seed": None}))


def _evaluators(
    config: BenchConfig,
    lms: Mapping[str, dspy.BaseLM] | None,
    judge_lm: dspy.BaseLM | Sequence[dspy.BaseLM] | None,
) -> dict[tuple[str, str], Any]:
    from attune_judge.judges import build_judge

    draft_judge = behaviour_judge = None
    if "drafting" in config.tasks:
        names = [config.judge_lm] if isinstance(config.judge_lm, str) else config.judge_lm
        if len(set(names)) != len(names) or not names:
            raise UserError("each --judge-lm must be given once; a jury needs distinct models")
        jlms = (
            list(judge_lm)
            if isinstance(judge_lm, list | tuple)
            else [judge_lm]
            if judge_lm is not None
            else [_resolve(n, config.lm_settings) for n in names]
        )
        draft_judge = build_judge("attunebench-reference", jlms[0])
        behaviour_judge = build_judge("attunebench-behaviours", jlms[0])
        if len(jlms) > 1:
            from attune_judge.judges import Jury

            draft_judge = Jury(
                [build_judge("attunebench-reference", lm) for lm in jlms], config.jury
            )
            behaviour_judge = Jury(
                [build_judge("attunebench-behaviours", lm) for lm in jlms], "majority"
            )
    out: dict[tuple[str, str], Any] = {}
    for model in config.models:
        lm = lms[model] if lms is not None and model in lms else _resolve(model, config.lm_settings)
        for task in config.tasks:
            out[(task, model)] = TaskEvaluator(
                task,
                model,
                lm,
                seed=config.seed,
                draft_judge=draft_judge,
                behaviour_judge=behaviour_judge,
            )
    return out


def bench_evaluators(config: BenchConfig) -> list[Any]:
    """The evaluators (judges) of a bench run, built from its config (module level: worker
    processes and Ray actors build them with this)."""
    return list(_evaluators(config, None, None).values())


def run_bench(
    config: BenchConfig,
    *,
    lms: Mapping[str, dspy.BaseLM] | None = None,
    judge_lm: dspy.BaseLM | Sequence[dspy.BaseLM] | None = None,
    executor: Any = None,
) -> BenchResult:
    """Run (or resume) the bench into ``config.out``.

    Parameters
    ----------
    config
        The command's arguments.
    lms
        ``dspy.LM`` per model label to use instead of resolving the labels (tests, custom
        engines); the labels still name the models everywhere.
    judge_lm
        The drafting judges' ``dspy.LM`` instead of resolving ``config.judge_lm``.
    executor
        Where units run (default: the runner's thread executor).

    Raises
    ------
    UserError
        Bad data or model settings, a duplicated model label, a run directory holding
        another run.

    Notes
    -----
    Writes no report; ``attune-judge bench`` adds it with
    ``attune_judge.report.write_report(result.run_dir)``, which Python callers call
    themselves when they want it.
    """
    if len(set(config.models)) != len(config.models):
        raise UserError("each --model must be given once (add @temperature=... to vary one)")
    conversations = load_attunebench(config.data)
    if config.max_conversations is not None:
        conversations = conversations[: config.max_conversations]
    evaluators = _evaluators(config, lms, judge_lm)
    plan = [
        Task(unit, evaluators[(task, model)])
        for task in config.tasks
        for model in config.models
        for unit in task_units(conversations, task, model)
    ]
    if not plan:
        raise UserError(f"{config.data}: no units to evaluate for tasks {config.tasks}")
    fingerprint, inputs = fingerprint_inputs([config.data])
    with config_executor(
        config,
        executor,
        bench_evaluators,
        "builds the models from the config in each worker: pass no lms or judge_lm (or pass "
        "your own executor)"
        if lms is not None or judge_lm is not None
        else None,
    ) as scaled:
        result = run_tasks(
            config.out,
            plan,
            command="bench",
            arguments=run_arguments(config, "quiet", options_after="max_failure_rate"),
            inputs=inputs,
            data_fingerprint=fingerprint,
            seed=config.seed,
            executor=scaled,
            max_concurrency=config.max_concurrency,
            budget=FailureBudget(max_failure_rate=config.max_failure_rate),
            quiet=config.quiet,
            B=config.B,
            extend_summary=lambda summary: _bench_summary(config, plan, summary),
            retry_failed=config.retry_failed,
            adaptive=config.adaptive,
        )
    return BenchResult(
        run_dir=Path(config.out),
        n_units=len(plan),
        n_skipped=result.n_skipped,
        n_run=result.n_run,
        stopped=result.stopped,
        summary=result.summary,
    )


def _bench_summary(
    config: BenchConfig, plan: Sequence[Any], runner_summary: JudgedSummary
) -> BenchSummary:
    """The bench's ``summary.json``: the runner's run facts and the per-task analysis (the
    records are also written to ``records.jsonl``)."""
    run_dir = RunDir(config.out)
    records = _records(run_dir, plan)
    write_jsonl(run_dir.path / "records.jsonl", records)
    analysis = analyse_records(
        records,
        models=config.models,
        tasks=config.tasks,
        B=config.B,
        seed=config.seed,
    )
    panels = _draft_panels(run_dir, plan, seed=config.seed, B=config.B)
    return BenchSummary(
        run=runner_summary.run,
        bench=analysis,
        degenerate=_degenerate_draft_judges(run_dir, plan),
        **({"panels": panels} if panels else {}),
    )


def _records(run_dir: Any, plan: Sequence[Any]) -> list[Any]:
    effective = effective_judgments(run_dir.read_judgments())
    return [
        record_from_judgment(
            effective.get(task.key),
            task=task.judge.task,
            model=task.item.candidate_model,
            conversation_id=task.item.conversation_id,
            turn=task.item.turn,
            unit_id=task.item.item_id,
            judge_id=task.judge.judge_id,
            truth=task.item.metadata.get("truth"),
        )
        for task in plan
    ]


def _degenerate_draft_judges(run_dir: Any, plan: Sequence[Any]) -> list[dict[str, Any]]:
    """Degenerate-judge findings of the drafting task's judges, pooled over the evaluated
    models they judged (the draft judge's criterion scores, the behaviour judge's answers)."""
    effective = effective_judgments(run_dir.read_judgments())
    answers: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for task in plan:
        evaluator = task.judge
        j = effective.get(task.key)
        if getattr(evaluator, "task", None) != "drafting" or j is None or j.status != "ok":
            continue
        pred = j.details.get("prediction") or {}
        for kind, judge in (
            ("judge_scores", evaluator.draft_judge),
            ("behaviour_answers", evaluator.behaviour_judge),
        ):
            values = pred.get(kind)
            if isinstance(values, dict) and values and judge is not None:
                answers.setdefault((kind, judge.judge_id), []).append(values)
    out = []
    for (kind, jid), rows in answers.items():
        for finding in degenerate_findings(rows):
            criterion = finding["criterion"]
            name = f"{kind}.{criterion}" if criterion is not None else None
            out.append({**finding, "criterion": name, "judge_id": jid})
    return out


def _draft_panels(run_dir: Any, plan: Sequence[Any], *, seed: int, B: int) -> list[Any]:
    """The ``panels`` block (as for ``score``) of a jury of draft judges: its members' scores
    of the drafts (kept in each drafting judgment) against each other and the jury, and
    self-preference (a judge model of the family that wrote the draft)."""
    drafting = [t for t in plan if t.judge.task == "drafting"]
    jury = drafting[0].judge.draft_judge if drafting else None
    if jury is None or not jury.spec.is_jury:
        return []
    effective = effective_judgments(run_dir.read_judgments())
    ok = []
    for task in drafting:
        j = effective.get(task.key)
        members = (j.details.get("draft_judge_members") if j is not None else None) or []
        if j is None or j.status != "ok" or not members:
            continue
        ok.append(
            Judgment(
                item_id=f"{task.item.candidate_model}:{j.item_id}",  # one per model's draft
                judge_id=jury.judge_id,
                conversation_id=j.conversation_id,
                candidate_model=task.item.candidate_model,
                normalized=j.details.get("metrics", {}).get("judge_score"),
                details={"members": members},
            )
        )
    candidates = {
        f"{t.item.candidate_model}:{t.item.item_id}": t.item.candidate_model for t in drafting
    }
    return panel_blocks({jury.judge_id: jury.spec}, {jury.judge_id: ok}, candidates, seed=seed, B=B)
