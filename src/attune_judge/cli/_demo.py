"""``attune-judge demo`` and ``validate`` (thin: parse, call attune_judge.demo, print)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attune_judge.cli._align import JudgeArtifactOption, resolve_judge_artifact
from attune_judge.cli._options import (
    ExecutorKind,
    JuryChoice,
    JuryOption,
    LmsOption,
    PerCriterionOption,
    RetryFailedOption,
    ScoreModeOption,
    SeedOption,
)
from attune_judge.cli._shared import EXECUTION, MODEL, SharedOptions, shared_options
from attune_judge.cli._stats import DEFAULT_B, BootstrapOption
from attune_judge.errors import UserError

__all__ = ["register"]


def demo(
    out: Annotated[Path, typer.Option("-o", "--out", help="Run directory.")] = Path("runs/demo"),
    parts: Annotated[
        str,
        typer.Option(
            help="Comma-separated parts: a (recorded judges vs experts), b (DUO), "
            "c (the embedded local judge), d (a short rubric-sensitivity run of the local "
            "judge on synthetic sample turns)."
        ),
    ] = "a,b,c,d",
    local_items: Annotated[
        int, typer.Option(min=2, help="Part c: conversations to score with the local judge.")
    ] = 6,
    sensitivity_conversations: Annotated[
        int,
        typer.Option(min=2, help="Part d: synthetic sample conversations (one turn each)."),
    ] = 2,
    replicates: BootstrapOption = DEFAULT_B,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Validate judges on real shipped data, offline: recorded LLM judges vs experts, DUO
    observers vs participants and bot models, the embedded local judge, and a short
    rubric-sensitivity run. Writes report.md and report.html (figures embedded)."""
    from attune_judge.demo import run_demo

    chosen = tuple(p.strip() for p in parts.split(",") if p.strip())
    run = run_demo(
        out,
        B=replicates,
        seed=seed,
        parts=chosen,
        local_items=local_items,
        sensitivity_conversations=sensitivity_conversations,
    )
    for line in run.summary:
        print(line)
    print(f"report: {run.report_md} and {Path(run.report_html).name} ({run.seconds:.0f} s)")


@shared_options(MODEL, EXECUTION)
def validate(
    lm: LmsOption,
    set_name: Annotated[
        str,
        typer.Option(
            "--set",
            help="Shipped set: empathic-communication-{empatheticdialogues,epitome,lend_an_ear}, "
            "duo, esconv.",
        ),
    ],
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Run directory.")] = None,
    limit: Annotated[
        int | None, typer.Option(min=2, help="Judge only the first N items of the set.")
    ] = None,
    replicates: BootstrapOption = DEFAULT_B,
    seed: SeedOption = 0,
    score_mode: ScoreModeOption = None,
    per_criterion: PerCriterionOption = False,
    jury: JuryOption = JuryChoice.mean,
    judge_artifact: JudgeArtifactOption = None,
    retry_failed: RetryFailedOption = False,
    *,
    opts: SharedOptions,
) -> None:
    """Run a judge model (or a jury: --lm A --lm B) on a shipped set and report its agreement
    with the people."""
    from attune_judge.runner import ExecutionOptions
    from attune_judge.validate import validate_judge

    lms = list(lm or [])
    if not lms:
        raise UserError("no judge model: pass --lm (repeat it for a jury) or set ATTUNE_LM")
    if len(lms) > 1 and jury is JuryChoice.none:
        raise UserError("validate needs one judge: combine several --lm with --jury mean/median")
    if len(lms) > 1 and judge_artifact is not None:
        raise UserError("--judge takes one judge model: pass a single --lm with an aligned judge")
    label = " + ".join(lms)
    safe = label.replace("/", "_").replace(":", "_").replace(" + ", "+")
    settings = opts.model(lms, seed=seed)
    judge = None
    only: set[str] | None = None
    artifact: str | None = None  # the run records it as its rubric: the fitted-items check
    if judge_artifact is not None:
        from attune_judge.align import held_out_items, read_manifest
        from attune_judge.judges._aligned import CALIBRATED_FORMAT

        calibrated = read_manifest(judge_artifact).format == CALIBRATED_FORMAT
        expected = score_mode is not None and score_mode.value == "expected"
        if not calibrated and (expected or per_criterion):
            raise UserError("--judge: an aligned judge scores in one call (score mode sampled)")
        if opts.executor is not ExecutorKind.thread:
            raise UserError("validate --judge runs on the thread executor: drop --executor")
        from attune_judge.judges import build_judge

        only = held_out_items(judge_artifact, set_name)
        if only is not None:
            print(
                f"{judge_artifact} was fitted on {set_name}: validating on its {len(only)} "
                "held-out (test-split) items only"
            )

        artifact = resolve_judge_artifact(judge_artifact)
        judge = build_judge(artifact or "", settings)

    run_dir = out or Path("runs") / f"validate-{set_name}-{safe}"
    res = validate_judge(
        set_name,
        label,
        run_dir,
        jury_lms=lms if len(lms) > 1 else None,
        jury=jury.value,
        limit=limit,
        B=replicates,
        seed=seed,
        lm_settings=settings,
        judge=judge,
        only_items=only,
        quiet=False,
        retry_failed=retry_failed,
        execution=ExecutionOptions(**opts.execution()),
        score_mode=score_mode.value if score_mode is not None else None,
        per_criterion=per_criterion,
        rubric=artifact,
    )
    print(f"{res.n_items} items judged, {res.n_ok} ok, failed: {res.n_failed or 0}")
    for line in res.summary:
        print(line)
    run_dir = Path(res.run_dir)
    print(f"report: {run_dir / 'report.md'} and report.html ({res.seconds:.0f} s)")


def register(app: typer.Typer) -> None:
    """Add ``demo`` and ``validate`` to ``app``."""
    app.command("demo")(demo)
    app.command("validate")(validate)
