"""``attune-judge sensitivity`` (thin: parse, call ``run_sensitivity``, print the verdicts)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attune_judge.cli._options import (
    CandidatesOption,
    JuryChoice,
    JuryOption,
    MaxFailureRateOption,
    MaxRetriesOption,
    ModelsOption,
    ParseRetriesOption,
    QuietOption,
    RetryFailedOption,
    RunDirOption,
    SeedOption,
    exit_if_stopped,
    setup_logging,
    split_csv,
    warn_degenerate,
    write_run_report,
)
from attune_judge.cli._shared import EXECUTION, MODEL, SharedOptions, shared_options
from attune_judge.cli._stats import FileBootstrapOption
from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.runs import JudgeBlock
    from attune_judge.sensitivity import SensitivityResult

__all__ = ["register"]


def _print(result: SensitivityResult) -> None:
    print(
        f"{result.run_dir}: {result.n_tasks} tasks ({len(set(result.judge_ids.values()))} "
        f"distinct judges for {len(result.judge_ids)} variants), {result.n_skipped} already "
        f"done, {result.n_run} judged now"
    )
    analysis = result.analysis
    if analysis is None:
        print(f"no analysis: {result.analysis_error}")
        return
    for warning in analysis.warnings:
        print(f"warning: {warning}")
    base = analysis.ranking(analysis.base)
    order = " > ".join(m.model for m in base.models if m.rank is not None)
    print(f"base ranking: {order}")
    for v in analysis.verdicts:
        tau = "—" if v.tau is None else f"{v.tau:.2f}"
        upper = "—" if v.tau_upper is None else f"{v.tau_upper:.2f}"
        verdict = {"unstable": "UNSTABLE"}.get(v.verdict, v.verdict)
        print(
            f"  {v.variant:<28} {verdict:<9} tau={tau} (upper {upper}) "
            f"flips={v.n_flips} significant={v.n_significant_flips}"
        )
        for reason in v.reasons:
            print(f"      {reason}")
    if analysis.variance is not None:
        shares = ", ".join(f"{c.source} {c.share:.0%}" for c in analysis.variance.components)
        print(f"variance shares ({analysis.variance.method}): {shares}")
    if (result.run_dir / "report.html").exists():
        print(f"report: {result.run_dir / 'report.md'}")


@shared_options(MODEL, EXECUTION)
def sensitivity(
    data: Annotated[
        Path, typer.Argument(help="AttuneBench data (folder/.json/.jsonl) or JudgeItem JSONL.")
    ],
    variants: Annotated[Path, typer.Option(help="Variants YAML file.")],
    out: RunDirOption,
    rubric: Annotated[
        str | None,
        typer.Option(help="Base rubric name or YAML file (default: the file's base.rubric)."),
    ] = None,
    lm: Annotated[
        list[str] | None,
        typer.Option(
            "--lm",
            help="Base judge model string (default: the file's, else ATTUNE_LM); repeat for a "
            "jury (--lm A --lm B): the base judge and every variant on the base model become "
            "juries of these models.",
        ),
    ] = None,
    jury: JuryOption = JuryChoice.mean,
    candidates: CandidatesOption = None,
    models: ModelsOption = None,
    only: Annotated[
        str | None, typer.Option(help="Comma-separated variant names to run (plus the base).")
    ] = None,
    max_failure_rate: MaxFailureRateOption = 0.25,
    max_retries: MaxRetriesOption = 5,
    parse_retries: ParseRetriesOption = 1,
    bootstrap: FileBootstrapOption = None,
    seed: SeedOption = 0,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write report.md and report.html.")
    ] = True,
    quiet: QuietOption = False,
    retry_failed: RetryFailedOption = False,
    *,
    opts: SharedOptions,
) -> None:
    """Judge every rubric/judge variant of a variants file and test whether rankings hold."""
    from attune_judge.sensitivity import SensitivityConfig, run_sensitivity

    setup_logging(quiet)
    if jury is JuryChoice.none and lm and len(lm) > 1:
        raise UserError(
            "--jury none: sensitivity compares variants of one judge; to compare judge models, "
            "give each its own variant in the variants file (lm: MODEL), or combine them with "
            "--jury mean|median|majority"
        )
    config = SensitivityConfig(
        data=data,
        variants=variants,
        out=out,
        rubric=rubric,
        lm=lm[0] if lm else None,
        jury_lms=list(lm) if lm and len(lm) > 1 else None,
        jury="mean" if jury is JuryChoice.none else jury.value,
        lm_settings=opts.model(lm),
        candidates=candidates,
        models=split_csv(models),
        only=split_csv(only),
        max_failure_rate=max_failure_rate,
        max_retries=max_retries,
        parse_retries=parse_retries,
        B=bootstrap,
        seed=seed,
        quiet=quiet,
        retry_failed=retry_failed,
        **opts.execution(),
    )
    result = run_sensitivity(config)
    if report:
        write_run_report(result.run_dir)
    _print(result)
    warn_degenerate(_summary_judges(result.run_dir))
    exit_if_stopped(result)


def _summary_judges(run_dir: Path) -> dict[str, JudgeBlock] | None:
    """The judge blocks of the run's summary.json (``None`` when there is none)."""
    from attune_judge.runs import read_summary

    return getattr(read_summary(run_dir), "judges", None)


def register(app: typer.Typer) -> None:
    """Add ``sensitivity`` to the app."""
    app.command("sensitivity")(sensitivity)
