"""The judge ``validate`` runs (built the same way here and in every worker process or Ray
actor) and the scoring run it makes of the set's items."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from attune_judge.errors import UserError
from attune_judge.lm import LMSettings
from attune_judge.runner import ExecutionOptions, judge_mode_options

if TYPE_CHECKING:
    from attune_judge.judges import Judge

__all__ = ["run_validation_judge", "validation_judge"]

log = logging.getLogger("attune_judge.validate")


def validation_judge(
    rubric: str,
    settings: LMSettings,
    seed: int,
    score_mode: str | None = None,
    per_criterion: bool = False,
    jury_lms: Sequence[str] | None = None,
    jury: str = "mean",
) -> Judge:
    """The judge ``validate`` runs (module level: Ray actors and worker processes build it):
    the model of ``settings``, or a :class:`~attune_judge.judges.Jury` of ``jury_lms``
    combined by ``jury``."""
    from attune_judge.judges import Jury, build_judge

    options = replace(judge_mode_options(rubric, score_mode, per_criterion), use_reference=False)
    if not jury_lms:
        return build_judge(rubric, settings.model_copy(update={"seed": seed}), options)
    if jury not in ("mean", "median", "majority"):
        raise UserError(f"validate combines several models with a jury, not {jury!r}")
    members = [
        build_judge(rubric, settings.member(m, jury=True, seed=seed), options) for m in jury_lms
    ]
    return Jury(members, method=jury)  # type: ignore[arg-type]


def run_validation_judge(
    out: Path,
    rubric: str,
    lm: str,
    judge: Judge | None,
    *,
    settings: LMSettings,
    execution: ExecutionOptions,
    seed: int,
    B: int,
    quiet: bool,
    score_mode: str | None,
    per_criterion: bool,
    jury_lms: Sequence[str] | None,
    jury: str,
    retry_failed: bool = False,
) -> Judge:
    """Judge ``out/items.jsonl`` into the scoring run ``out/run`` (resumed); the judge used."""
    from attune_judge.runner import JudgeFactory, ScoreConfig, run_score, scaled_executor

    factory = JudgeFactory(
        validation_judge,
        (
            rubric,
            settings,
            seed,
            score_mode,
            per_criterion,
            tuple(jury_lms) if jury_lms else None,
            jury,
        ),
    )
    if judge is None:
        judge = factory.build()[0]
    elif execution.executor != "thread":
        raise ValueError(
            f"executor={execution.executor!r} builds the judge in each worker: pass no judge"
        )
    config = ScoreConfig(
        data=out / "items.jsonl",
        out=out / "run",
        rubric=rubric,
        lm=lm,
        lm_settings=LMSettings(api_base=settings.api_base),  # the manifest records the server
        max_concurrency=execution.max_concurrency,
        max_failure_rate=1.0,
        seed=seed,
        quiet=quiet,
        B=B,
        retry_failed=retry_failed,
        adaptive=execution.adaptive,
    )
    with scaled_executor(
        execution.executor,
        factory,
        workers=execution.workers,
        max_concurrency=execution.max_concurrency,
        ray_address=execution.ray_address,
    ) as scaled:
        result = run_score(config, judges=[judge], executor=scaled)
    if result.stopped:
        log.error("%s", result.stopped)  # the runner leaves reporting it to its caller
    return judge
