"""``run_sensitivity``: the Python equivalent of ``attune-judge sensitivity``.

One run directory holds every variant: one judge (its own ``judge_id``) per variant, all
planned together and executed by the runner (:func:`attune_judge.runner.run_tasks`) with its
resume, retries and failure budget. Variants whose judges are identical (same rubric hash,
model and options) share one judge, so nothing — in particular the base — is judged twice;
a resumed run skips finished judgments, and DSPy's request cache (``ATTUNE_CACHE_DIR``) answers
any prompt already sent by an earlier run (``attune-judge score`` of the same rubric included).

After the run, the judgments become tidy tables (normalised scores, so scale changes compare),
the analysis and the variance decomposition run, and ``summary.json`` gets ``kind:
"sensitivity"`` and a ``sensitivity`` block next to the runner's per-judge summary. The full
report (``report.md`` / ``report.html`` with figures and the sensitivity sections) is not
written here, as ``sensitivity`` sits below the report package: ``attune-judge sensitivity``
writes it afterwards with the report package's one renderer
(``attune_judge.report.write_report(result.run_dir)``: the analysis is in the summary; call it
yourself after :func:`run_sensitivity`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attune_judge.calibration import SensitivityAnalysis, VarianceDecomposition
from attune_judge.data import JudgeItem
from attune_judge.errors import UserError
from attune_judge.judges import Judge
from attune_judge.runner import (
    RunDir,
    config_executor,
    effective_judgments,
    execution_options,
    fingerprint_inputs,
    load_judge_items,
    plan_tasks,
    run_arguments,
    run_tasks,
)
from attune_judge.runs import JudgedSummary, SensitivitySummary
from attune_judge.sensitivity._analysis import analyze_sensitivity
from attune_judge.sensitivity._config import SensitivityConfig, SensitivityResult
from attune_judge.sensitivity._design import decompose_variance, design_factors, judgment_tables
from attune_judge.sensitivity._judges import (
    LMFactory,
    _build_judges,
    _default_lm_factory,
    _jury_options,
    _unique,
    _variants,
    sensitivity_judges,
)
from attune_judge.sensitivity._summary import sensitivity_block
from attune_judge.sensitivity._table import CriterionTable, ScoreTable
from attune_judge.sensitivity._variants import AnalysisSettings

if TYPE_CHECKING:
    from attune_judge.runner import RunResult

__all__ = [
    "SensitivityConfig",
    "SensitivityResult",
    "design_factors",
    "judgment_tables",
    "run_sensitivity",
    "sensitivity_judges",
]


def run_sensitivity(
    config: SensitivityConfig,
    *,
    lm_factory: LMFactory | None = None,
    executor: Any = None,
) -> SensitivityResult:
    """Run every variant of a variants file into one run directory and analyse the rankings.

    Parameters
    ----------
    config
        The command's arguments.
    lm_factory
        Model string (``None`` = the default model) → ``dspy.LM``; default: resolve the string
        with the ``ATTUNE_*`` settings, DSPy's cache under ``ATTUNE_CACHE_DIR``. Tests pass
        test engines here.
    executor
        Where the tasks run (default: threads).

    Raises
    ------
    UserError
        Bad variants file, rubric, data or model; a directory holding another run.

    Notes
    -----
    Writes no report; ``attune-judge sensitivity`` adds it with
    ``attune_judge.report.write_report(result.run_dir)``, which Python callers call
    themselves when they want it.
    """
    spec, variants = _variants(config)
    items = load_judge_items(config.data, candidates=config.candidates, models=config.models)
    if not items:
        raise UserError(f"{config.data}: nothing to judge (no annotated turns with candidates)")
    judges = _build_judges(
        variants, lm_factory or _default_lm_factory(config), **_jury_options(config)
    )
    judge_ids = {name: j.judge_id for name, j in judges.items()}
    if config.B is not None:  # --bootstrap overrides the file's, and is what is recorded
        spec = spec.model_copy(
            update={"analysis": spec.analysis.model_copy(update={"B": config.B})}
        )
    B = spec.analysis.B
    found: dict[str, Any] = {}

    def study(summary: JudgedSummary) -> SensitivitySummary:
        effective = effective_judgments(RunDir(config.out).read_judgments())
        scores, criteria = judgment_tables(variants, judge_ids, items, effective)
        design = design_factors(spec, variants)
        variance, variance_error = decompose_variance(
            scores, variants, judge_ids, design, spec.analysis.variance_method
        )
        found["analysis"], found["error"] = _analyse(scores, criteria, variance, spec.analysis, B)
        warned = found["analysis"].warnings if found["analysis"] is not None else []
        notes = [n for n in (found["error"], variance_error, *warned) if n]
        block = sensitivity_block(
            spec, variants, judge_ids, found["analysis"], design=design, notes=notes
        )
        kept = {k: getattr(summary, k) for k in summary.model_fields_set if k != "kind"}
        return SensitivitySummary(**kept, sensitivity=block)

    unique = list(_unique(judges).values())
    result = _judge(config, items, unique, B, lm_factory, executor, study)
    analysis, error = found.get("analysis"), found.get("error")
    return SensitivityResult(
        run_dir=Path(config.out),
        judge_ids=judge_ids,
        n_tasks=result.n_tasks,
        n_run=result.n_run,
        n_skipped=result.n_skipped,
        stopped=result.stopped,
        analysis=analysis,
        analysis_error=error,
    )


def _judge(
    config: SensitivityConfig,
    items: Sequence[JudgeItem],
    judges: list[Judge],
    B: int,
    lm_factory: LMFactory | None,
    executor: Any,
    study: Callable[[JudgedSummary], SensitivitySummary],
) -> RunResult:
    """Plan every (item, judge) task and run them with the runner, on ``config``'s executor;
    ``study`` adds the analysis to the summary (see ``run_tasks(extend_summary=...)``)."""
    paths = [config.data, config.variants] + ([config.candidates] if config.candidates else [])
    fingerprint, inputs = fingerprint_inputs(paths)
    tasks = plan_tasks(items, judges)
    with config_executor(
        config,
        executor,
        sensitivity_judges,
        "builds the judges from the config in each worker: pass no lm_factory (or pass your "
        "own executor)"
        if lm_factory is not None
        else None,
    ) as scaled:
        return run_tasks(
            config.out,
            tasks,
            command="sensitivity",
            arguments=run_arguments(config, "quiet", "fsync"),
            inputs=inputs,
            data_fingerprint=fingerprint,
            executor=scaled,
            **execution_options(config),
            fsync=config.fsync,
            B=B,
            extend_summary=study,
        )


def _analyse(
    scores: ScoreTable,
    criteria: CriterionTable,
    variance: VarianceDecomposition | None,
    settings: AnalysisSettings,
    B: int,
) -> tuple[SensitivityAnalysis | None, str | None]:
    """The ranking analysis, or why there is none (too little was judged)."""
    try:
        analysis = analyze_sensitivity(
            scores,
            criteria=criteria,
            variance=variance,
            alpha=settings.alpha,
            tau_threshold=settings.tau_threshold,
            adjust=settings.adjust,
            B=B,
            seed=settings.seed,
            bounds=(0.0, 1.0),  # the score table holds normalised scores (_design.py)
        )
    except ValueError as exc:
        return None, f"no analysis: {exc}"
    return analysis, None
