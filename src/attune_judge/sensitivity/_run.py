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
writes it afterwards with the report package's ``write_sensitivity_report``
(``write_sensitivity_report(result.run_dir, result.analysis)``; call it yourself after
:func:`run_sensitivity`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeItem, Judgment
from attune_judge.errors import UserError
from attune_judge.judges import Judge, JuryMethod
from attune_judge.lm import ModelOptions
from attune_judge.rubrics import Rubric, load_rubric
from attune_judge.runner._execution import DEFAULT_MAX_CONCURRENCY, DEFAULT_WORKERS
from attune_judge.sensitivity._analysis import analyze_sensitivity
from attune_judge.sensitivity._resolve import Variant, resolve_variants
from attune_judge.sensitivity._results import SensitivityAnalysis, VarianceDecomposition
from attune_judge.sensitivity._summary import sensitivity_block
from attune_judge.sensitivity._table import CriterionTable, ScoreTable
from attune_judge.sensitivity._variance import variance_decomposition
from attune_judge.sensitivity._variants import BASE_VARIANT, VariantsFile, load_variants

__all__ = [
    "SensitivityConfig",
    "SensitivityResult",
    "default_lm",
    "design_factors",
    "judgment_tables",
    "run_sensitivity",
    "sensitivity_judges",
]

LMFactory = Callable[[str | None], Any]
"""Model string (``None`` = the default) → ``dspy.LM``."""


class SensitivityConfig(BaseModel):
    """The arguments of ``attune-judge sensitivity`` (recorded in ``manifest.json``)."""

    model_config = ConfigDict(extra="forbid")

    data: Path
    """AttuneBench data or a JudgeItem JSONL file."""
    variants: Path
    """The variants YAML file."""
    out: Path
    """The run directory."""
    rubric: str | None = None
    """Base rubric (name or YAML path); overrides the file's ``base.rubric``."""
    lm: str | None = None
    """Base judge model; overrides the file's ``base.judge.lm`` (default ``ATTUNE_LM``)."""
    jury_lms: list[str] | None = None
    """Several models (``--lm A --lm B``): the base judge, and every variant that keeps the
    base model, is a jury of these (``lm`` is the first); each member's judgment is kept."""
    jury: Literal["mean", "median", "majority"] = "mean"
    """How the jury combines its members per item."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server (for the base model(s) only)."""
    model_options: ModelOptions = ModelOptions()
    """Temperature, max tokens, response format, timeout of every judge model (a variant's
    own decoding settings override them)."""
    candidates: Path | None = None
    """Candidates JSONL; without it the AttuneBench pseudo-models are judged."""
    models: list[str] | None = None
    """Candidate models to judge (default: all)."""
    only: list[str] | None = None
    """Run only these variants (and the base)."""
    max_concurrency: int = Field(default=DEFAULT_MAX_CONCURRENCY, ge=1)
    """Judgments in flight at once."""
    max_failure_rate: float = Field(default=0.25, ge=0.0, le=1.0)
    """Stop when more than this share of judgments fail."""
    min_attempts: int = Field(default=20, ge=1)
    """Judgments to see before the failure budget applies."""
    max_retries: int = Field(default=5, ge=0)
    """Retries of a rate-limited or timed-out judgment."""
    parse_retries: int = Field(default=1, ge=0)
    """Times a ``parse_error`` is asked again (its answer is evicted from the request cache)."""
    retry_base_delay_s: float = Field(default=1.0, ge=0.0)
    """First backoff."""
    seed: int = 0
    """Seed of the retry jitter and (where supported) the judge model."""
    bootstrap_replicates: int | None = Field(default=None, ge=100)
    """Overrides the file's ``analysis.bootstrap_replicates``."""
    quiet: bool = False
    """No progress bar."""
    fsync: bool = True
    """fsync each judgment record."""
    executor: Literal["thread", "process", "ray"] = "thread"
    """Where judgments run (see ``ScoreConfig.executor``)."""
    workers: int = Field(default=DEFAULT_WORKERS, ge=1)
    """Worker processes or Ray actors."""
    ray_address: str | None = None
    """Ray cluster to join (``None``: start or join a local one)."""


class SensitivityResult(BaseModel):
    """What ``run_sensitivity`` did and found."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    run_dir: Path
    """The run directory."""
    judge_ids: dict[str, str]
    """Variant → judge_id (variants with identical judges share one)."""
    n_tasks: int
    """Planned (item, judge) tasks (unique judges × items)."""
    n_run: int
    """Judgments made by this invocation."""
    n_skipped: int
    """Tasks already finished before this invocation."""
    stopped: str | None
    """Why the run stopped early, if it did."""
    analysis: SensitivityAnalysis | None
    """The analysis (``None`` when too little was judged to analyse)."""
    analysis_error: str | None = None
    """Why there is no analysis."""

    @property
    def exit_code(self) -> int:
        """0, or 3 when the failure budget stopped the run (as ``score``)."""
        from attune_judge.runner import EXIT_FAILURE_BUDGET

        return EXIT_FAILURE_BUDGET if self.stopped else 0


def _base_rubric(config: SensitivityConfig, spec: VariantsFile) -> Rubric:
    ref = config.rubric or spec.base.rubric
    if ref is None:
        raise UserError(
            f"{config.variants}: no base rubric; set base.rubric in the file or pass --rubric"
        )
    if config.rubric is None and (ref.endswith((".yaml", ".yml")) or "/" in ref):
        path = Path(ref).expanduser()
        if not path.is_absolute():
            path = Path(config.variants).parent / path
        return load_rubric(path)
    return load_rubric(ref)


def _jury_lms(config: SensitivityConfig) -> list[str]:
    """The base judge's jury models (empty: one model), duplicates refused."""
    lms = list(config.jury_lms or [])
    if len(lms) < 2:
        return []
    twice = sorted({m for m in lms if lms.count(m) > 1})
    if twice:
        raise UserError(f"--lm given twice for {', '.join(twice)}; a jury needs distinct models")
    if config.lm is not None and config.lm != lms[0]:
        raise ValueError("SensitivityConfig.lm must be the first of jury_lms")
    return lms


def _variants(config: SensitivityConfig) -> tuple[VariantsFile, list[Variant]]:
    _jury_lms(config)
    spec = load_variants(config.variants)
    rubric = _base_rubric(config, spec)
    variants = resolve_variants(
        spec,
        rubric,
        lm=config.lm or spec.base.judge.lm or default_lm(),
        source=str(config.variants),
        only=config.only,
    )
    return spec, list(variants)


def _unique(judges: dict[str, Judge]) -> dict[str, Judge]:
    """Judges by id: variants with identical judges share one."""
    unique: dict[str, Judge] = {}
    for j in judges.values():
        unique.setdefault(j.judge_id, j)
    return unique


def sensitivity_judges(config: SensitivityConfig) -> list[Judge]:
    """The distinct judges of a sensitivity run, built from its config (module level: worker
    processes and Ray actors build them with this)."""
    _, variants = _variants(config)
    judges = _build_judges(variants, _default_lm_factory(config), **_jury_options(config))
    return list(_unique(judges).values())


def _jury_options(config: SensitivityConfig) -> dict[str, Any]:
    lms = _jury_lms(config)
    return {"jury_lms": lms, "jury": config.jury} if lms else {}


def _default_lm_factory(config: SensitivityConfig) -> LMFactory:
    """Models built as ``attune-judge score`` builds them, so the base judge has the same
    judge_id and request-cache keys as a ``score`` run of the same rubric and model."""
    from attune_judge.lm import LMSettings, configure_cache_from_env, resolve_lm

    configure_cache_from_env()
    cache = LMSettings.from_env().cache  # ATTUNE_CACHE=0 bypasses the request cache

    def make(lm: str | None) -> Any:
        model = lm or default_lm()
        base = _jury_lms(config) or [config.lm or default_lm()]
        api_base = config.api_base if model in base else None
        return resolve_lm(
            model,
            api_base=api_base,
            seed=config.seed,
            cache=cache,
            **config.model_options.as_kwargs(),
        )

    return make


def default_lm() -> str:
    """The model of a judge that names none: ``ATTUNE_LM``, else ``local``."""
    from attune_judge.lm import env_setting

    return env_setting("lm") or "local"


def _build_judges(
    variants: Sequence[Variant],
    lm_factory: LMFactory,
    *,
    jury_lms: Sequence[str] = (),
    jury: JuryMethod = "mean",
) -> dict[str, Judge]:
    """One judge per variant; with ``jury_lms``, a variant on the base model (the first of
    them) is a jury of the same rubric and settings on every one of those models."""
    from attune_judge.judges import Jury, build_judge

    lms: dict[str | None, Any] = {}
    judges: dict[str, Judge] = {}
    for v in variants:
        members = list(jury_lms) if jury_lms and v.lm == jury_lms[0] else [v.lm]
        for m in members:
            if m not in lms:
                lms[m] = lm_factory(m)
        options: dict[str, Any] = {"reasoning": v.reasoning}
        if v.rubric.kind == "reference":
            options["use_reference"] = v.use_reference
        elif not v.use_reference:
            raise UserError(
                f"variant {v.name!r}: withholding the reference needs a reference rubric, "
                f"not {v.rubric.kind!r}"
            )
        if len(members) > 1:
            judges[v.name] = Jury(
                [build_judge(v.rubric, lms[m], **options) for m in members],
                method=jury,
            )
        else:
            judges[v.name] = build_judge(v.rubric, lms[v.lm], **options)
    return judges


def judgment_tables(
    variants: Sequence[Variant],
    judge_ids: dict[str, str],
    items: Sequence[JudgeItem],
    judgments: dict[tuple[str, str], Judgment],
) -> tuple[ScoreTable, CriterionTable]:
    """Tidy tables of normalised overall and per-criterion scores, one row per variant × item.

    A missing or non-``ok`` judgment is a NaN overall score (and no criterion rows). Criterion
    scores are mapped to [0, 1] by the variant's own scale.
    """
    cols: dict[str, list[Any]] = {k: [] for k in ("variant", "model", "conv", "turn", "score")}
    ccols: dict[str, list[Any]] = {k: [] for k in ("variant", "model", "conv", "crit", "score")}
    for v in variants:
        jid = judge_ids[v.name]
        for item in items:
            j = judgments.get((item.item_id, jid))
            ok = j is not None and j.status == "ok" and j.normalized is not None
            value = math.nan
            if j is not None and ok and j.normalized is not None:
                value = float(j.normalized)
            cols["variant"].append(v.name)
            cols["model"].append(item.candidate_model)
            cols["conv"].append(item.conversation_id)
            cols["turn"].append(item.turn if item.turn is not None else item.item_id)
            cols["score"].append(value)
            if j is None or not ok:
                continue
            for cid, raw in j.scores.items():
                scale = v.rubric.scale_of(cid)
                ccols["variant"].append(v.name)
                ccols["model"].append(item.candidate_model)
                ccols["conv"].append(item.conversation_id)
                ccols["crit"].append(cid)
                ccols["score"].append((raw - scale.min) / (scale.max - scale.min))
    return (
        ScoreTable.from_columns(
            cols["variant"], cols["model"], cols["conv"], cols["turn"], cols["score"]
        ),
        CriterionTable.from_columns(
            ccols["variant"], ccols["model"], ccols["conv"], ccols["crit"], ccols["score"]
        ),
    )


def design_factors(spec: VariantsFile, variants: Sequence[Variant]) -> dict[str, dict[str, str]]:
    """Variant → factor levels of the variance decomposition (besides model and conversation).

    ``judge`` is the judge model. Rubric/prompt changes are one ``variant`` factor (the
    perturbations applied, joined with ``+``), except in a full-factorial file, where each
    declared factor that is not a judge-model factor is its own factor (named after it in lower
    case, other characters replaced by ``_``) and interactions are pooled into the residual.
    """
    rubric_factors = [
        f
        for f in (spec.factors if spec.full_factorial else [])
        if {spec.perturbation(level).kind for level in f.levels} != {"judge_model"}
    ]
    names: dict[str, str] = {}
    for f in rubric_factors:
        name = re.sub(r"[^a-z_]", "_", f.name.lower())
        if not name[:1].isalpha() or name in ("model", "conversation", "judge", *names.values()):
            name = f"f_{name}"
        names[f.name] = name
    out: dict[str, dict[str, str]] = {}
    for v in variants:
        levels = {"judge": v.judge_label}
        if rubric_factors:
            for f in rubric_factors:
                hit = [p for p in v.perturbations if p in f.levels]
                levels[names[f.name]] = hit[0] if hit else BASE_VARIANT
        else:
            levels["variant"] = v.rubric_condition
        out[v.name] = levels
    return out


def _decompose(
    scores: ScoreTable,
    variants: Sequence[Variant],
    judge_ids: dict[str, str],
    design: dict[str, dict[str, str]],
    method: str,
) -> tuple[VarianceDecomposition | None, str | None]:
    """Variance decomposition over unique judges (a judge shared by variants counts once)."""
    seen: set[str] = set()
    keep: set[str] = set()
    for v in variants:
        if judge_ids[v.name] not in seen:
            seen.add(judge_ids[v.name])
            keep.add(v.name)
    rows = [i for i, name in enumerate(scores.variant.tolist()) if name in keep]
    names = [str(n) for n in scores.variant[rows]]
    factors: dict[str, list[str]] = {
        "model": scores.model[rows].tolist(),
        "conversation": scores.conversation[rows].tolist(),
    }
    for factor in design[variants[0].name]:
        factors[factor] = [design[n][factor] for n in names]
    try:
        return (
            variance_decomposition(scores.score[rows], factors, method=method),  # type: ignore[arg-type]
            None,
        )
    except (ValueError, np.linalg.LinAlgError) as exc:  # degenerate data: report, do not crash
        return None, f"variance decomposition not computed: {exc}"


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
    Writes no full report (only the runner's plain ``report.md``); ``attune-judge
    sensitivity`` adds it with the report package's ``write_sensitivity_report(result.run_dir,
    result.analysis)``, which Python callers call themselves when they want it.
    """
    from attune_judge.runner import (
        EXECUTOR_FIELDS,
        JudgeFactory,
        RunDir,
        effective_judgments,
        execution_options,
        fingerprint_inputs,
        load_judge_items,
        plan_tasks,
        run_tasks,
        scaled_executor,
    )

    spec, variants = _variants(config)
    items = load_judge_items(config.data, candidates=config.candidates, models=config.models)
    if not items:
        raise UserError(f"{config.data}: nothing to judge (no annotated turns with candidates)")
    judges = _build_judges(
        variants, lm_factory or _default_lm_factory(config), **_jury_options(config)
    )
    judge_ids = {name: j.judge_id for name, j in judges.items()}
    unique = _unique(judges)
    paths = [config.data, config.variants] + ([config.candidates] if config.candidates else [])
    fingerprint, inputs = fingerprint_inputs(paths)
    tasks = plan_tasks(items, list(unique.values()))
    B = config.bootstrap_replicates or spec.analysis.bootstrap_replicates
    arguments = config.model_dump(mode="json")
    for key in ("quiet", "fsync"):
        arguments.pop(key, None)
    if config.executor == "thread":
        for key in EXECUTOR_FIELDS:
            arguments.pop(key, None)
    kind = config.executor if executor is None else "thread"
    if kind != "thread" and lm_factory is not None:
        raise ValueError(
            f"executor={kind!r} builds the judges from the config in each worker: pass no "
            "lm_factory (or pass your own executor)"
        )
    with scaled_executor(
        kind,
        JudgeFactory(sensitivity_judges, (config,)),
        workers=config.workers,
        max_concurrency=config.max_concurrency,
        ray_address=config.ray_address,
    ) as scaled:
        result = run_tasks(
            config.out,
            tasks,
            command="sensitivity",
            arguments=arguments,
            inputs=inputs,
            data_fingerprint=fingerprint,
            executor=executor or scaled,
            **execution_options(config),
            fsync=config.fsync,
            bootstrap_B=B,
        )
    run_dir = RunDir(config.out)
    effective = effective_judgments(run_dir.read_judgments())
    scores, criteria = judgment_tables(variants, judge_ids, items, effective)
    settings = spec.analysis
    design = design_factors(spec, variants)
    variance, variance_error = _decompose(
        scores, variants, judge_ids, design, settings.variance_method
    )
    analysis: SensitivityAnalysis | None = None
    error: str | None = None
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
        )
    except ValueError as exc:
        error = f"no analysis: {exc}"
    summary = dict(result.summary)
    summary["kind"] = "sensitivity"
    summary["sensitivity"] = sensitivity_block(
        spec,
        variants,
        judge_ids,
        analysis,
        design=design,
        notes=[n for n in (error, variance_error) if n],
    )
    run_dir.write_json(run_dir.summary_path, summary)
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
