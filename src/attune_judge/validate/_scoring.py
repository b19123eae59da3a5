"""The judge ``validate`` runs (built the same way here and in every worker process or Ray
actor) and the scoring run it makes of the set's items."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attune_judge.errors import UserError
from attune_judge.lm import ModelOptions, member_api_base
from attune_judge.runner import judge_mode_options

__all__ = ["run_validation_judge", "validation_judge"]

log = logging.getLogger("attune_judge.validate")


def validation_judge(
    rubric: str,
    lm: str,
    api_base: str | None,
    seed: int,
    score_mode: str | None = None,
    per_criterion: bool = False,
    model_options: ModelOptions | None = None,
    jury_lms: Sequence[str] | None = None,
    jury: str = "mean",
) -> Any:
    """The judge ``validate`` runs (module level: Ray actors and worker processes build it):
    one model, or a :class:`~attune_judge.judges.Jury` of ``jury_lms`` combined by ``jury``."""
    from attune_judge.judges import build_judge

    if jury_lms:
        from attune_judge.judges import Jury

        if jury not in ("mean", "median", "majority"):
            raise UserError(f"validate combines several models with a jury, not {jury!r}")

        members = [
            validation_judge(
                rubric,
                m,
                member_api_base(m, api_base, jury=True),
                seed,
                score_mode,
                per_criterion,
                model_options,
            )
            for m in jury_lms
        ]
        return Jury(members, method=jury)  # type: ignore[arg-type]
    return build_judge(
        rubric,
        lm,
        **judge_mode_options(rubric, score_mode, per_criterion),
        use_reference=False,
        api_base=api_base,
        seed=seed,
        num_retries=0,
        **(model_options.as_kwargs() if model_options is not None else {}),
    )


def run_validation_judge(
    out: Path,
    rubric: str,
    lm: str,
    judge: Any,
    *,
    api_base: str | None,
    seed: int,
    B: int,
    max_concurrency: int,
    quiet: bool,
    executor: str,
    workers: int,
    ray_address: str | None,
    model_options: ModelOptions | None,
    score_mode: str | None,
    per_criterion: bool,
    jury_lms: Sequence[str] | None,
    jury: str,
    retry_failed: bool = False,
    adaptive: bool = True,
) -> Any:
    """Judge ``out/items.jsonl`` into the scoring run ``out/run`` (resumed); the judge used."""
    from attune_judge.runner import JudgeFactory, ScoreConfig, run_score, scaled_executor

    factory = JudgeFactory(
        validation_judge,
        (
            rubric,
            lm,
            api_base,
            seed,
            score_mode,
            per_criterion,
            model_options,
            tuple(jury_lms) if jury_lms else None,
            jury,
        ),
    )
    if judge is None:
        judge = factory.build()[0]
    elif executor != "thread":
        raise ValueError(f"executor={executor!r} builds the judge in each worker: pass no judge")
    config = ScoreConfig(
        data=out / "items.jsonl",
        out=out / "run",
        rubric=rubric,
        lm=lm,
        api_base=api_base,
        max_concurrency=max_concurrency,
        max_failure_rate=1.0,
        seed=seed,
        quiet=quiet,
        B=B,
        retry_failed=retry_failed,
        adaptive=adaptive,
    )
    with scaled_executor(
        executor,
        factory,
        workers=workers,
        max_concurrency=max_concurrency,
        ray_address=ray_address,
    ) as scaled:
        result = run_score(config, judges=[judge], executor=scaled)
    if result.stopped:
        log.error("%s", result.stopped)  # the runner leaves reporting it to its caller
    return judge
