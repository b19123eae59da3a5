"""``attune-judge score`` and ``attune-judge generate`` (thin: parse, call the runner, print)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attune_judge.cli._align import JudgeArtifactOption, resolve_judge_artifact
from attune_judge.cli._options import (
    CandidatesOption,
    JuryChoice,
    JuryOption,
    LmOption,
    LmsOption,
    MaxCostOption,
    MaxFailureRateOption,
    MaxRetriesOption,
    ModelsOption,
    NoReferenceOption,
    ParseRetriesOption,
    PerCriterionOption,
    PriceInOption,
    PriceOutOption,
    QuietOption,
    RetryFailedOption,
    RunDirOption,
    ScoreModeOption,
    SeedOption,
    exit_if_stopped,
    setup_logging,
    split_csv,
    warn_degenerate,
    write_run_report,
)
from attune_judge.cli._shared import EXECUTION, MODEL, SharedOptions, shared_options
from attune_judge.cli._stats import DEFAULT_B, DEFAULT_LEVEL, BootstrapOption, CiOption
from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.runner import RunResult

__all__ = ["register"]


def aligned(rows: list[tuple[str, str, str]]) -> list[str]:
    """``model  estimate  counts`` lines whose columns line up however long a model's name."""
    width = max([20, *(len(r[0]) for r in rows)])
    return [f"  {a:<{width}} {b:<26} {c}".rstrip() for a, b, c in rows]


def _print_result(result: RunResult) -> None:
    from attune_judge.calibration import fmt_estimate, fmt_num
    from attune_judge.runs import JudgedSummary, record_json

    summary = result.summary
    assert isinstance(summary, JudgedSummary)  # a score run's summary
    run = summary.run
    print(
        f"{result.run_dir}: {result.n_tasks} tasks, {result.n_skipped} already done, "
        f"{result.n_run} judged now in {result.wall_time_s:.1f} s; "
        f"complete: {'yes' if run.complete else 'no'}"
    )
    for jid, block in summary.judges.items():
        print(f"judge {jid} ({block.label})")
        rows = []
        for model, m in block.models.items() if block.pairwise is None else ():
            s = m.score
            cell = fmt_num(None) if s is None else fmt_estimate(s.mean, s.lower, s.upper)
            failed = {k: v for k, v in m.n_by_status.items() if k != "ok" and v}
            rows.append((model, cell, f"n_ok={m.n_ok}/{m.n_planned} {failed or ''}"))
        for line in aligned(rows):
            print(line)
        board_warnings = block.leaderboard.warnings if block.leaderboard is not None else []
        for w in dict.fromkeys([*block.warnings, *board_warnings]):
            print(f"  warning: {w}")  # too few conversations, scores at a bound, ...
        if block.pairwise is not None:
            _print_pairwise(record_json(block.pairwise))
    for panel in summary.panels:
        _print_panel(record_json(panel))
    totals = run.totals
    if totals is not None:
        tokens, cost, known = totals.tokens, totals.cost_usd, totals.cost_usd_known
        unpriced = totals.n_judged - totals.n_cost_known
        if cost is not None:
            money = f"${cost:.4f}"
        elif known is not None:  # a jury with a priced member: its part is known
            money = (
                f"${known:.4f} known + {unpriced} judgment(s) with an unknown price "
                "(--price-in/--price-out)"
            )
        else:
            money = f"no prices known ({unpriced} judgment(s): --price-in/--price-out)"
        print(
            f"cost {money}; tokens {tokens.prompt} in, {tokens.completion} out, "
            f"{tokens.calls} calls"
        )


def _metric(m: dict[str, Any] | None) -> str:
    from attune_judge.calibration import fmt_estimate

    m = m or {}
    return fmt_estimate(m.get("estimate"), m.get("lower"), m.get("upper"))


def _print_panel(p: dict[str, Any]) -> None:
    who = f"jury {p['jury_id']}" if p.get("jury_id") else "judges"
    if "raters" not in p:
        print(f"{who}: {p.get('note')}")
        return
    print(f"{who}: Krippendorff's alpha among {len(p['raters'])} judges {_metric(p['alpha'])}")
    for m in p["members"]:
        metrics = m["vs_consensus"]["metrics"]
        first = next(iter(metrics), None)
        cell = f"{first} {_metric(metrics[first])}" if first else "—"
        print(f"  {m['model'] or m['member']:<28} vs consensus: {cell}")
    for s in p["self_preference"]:
        print(
            f"  self-preference {s['model']} ({s['family']}): own family "
            f"{_metric(s['own_family'])}, beyond leniency {_metric(s['bias'])} "
            f"(n own {s['n_own']}, other {s['n_other']})"
        )
    for note in p["notes"]:
        print(f"  note: {note}")


def _print_pairwise(p: dict[str, Any]) -> None:
    from attune_judge.calibration import fmt_estimate

    v = p["verdicts"]
    print(
        f"  pairs judged in both orders: {p['n_pairs']} (A {v['A']}, B {v['B']}, tie {v['tie']}, "
        f"inconsistent {v['inconsistent']})"
    )
    for pair, c in p["by_pair"].items():
        wins = ", ".join(f"{name} {n}" for name, n in c["wins"].items())
        print(f"    {pair}: {wins}, tie {c['ties']}, inconsistent {c['inconsistent']}")
    bias = p.get("position_bias")
    if bias:
        first, flip = bias["first_position_win_rate"], bias["flip_rate"]
        print(
            "  position bias: first-position win rate "
            f"{fmt_estimate(first['estimate'], first['lower'], first['upper'])} (0.5 = none), "
            f"flip rate {fmt_estimate(flip['estimate'], flip['lower'], flip['upper'])}"
        )


@shared_options(MODEL, EXECUTION)
def score(
    out: RunDirOption,
    data: Annotated[
        Path | None,
        typer.Argument(
            help="AttuneBench data (folder/.json/.jsonl) or JudgeItem JSONL (omit it with "
            "--candidates LOG.eval: an Inspect log carries its own conversations).",
            show_default=False,
        ),
    ] = None,
    rubric: Annotated[
        str, typer.Option(help="Rubric name or YAML file.")
    ] = "attunebench-reference",
    lm: LmsOption = None,
    jury: JuryOption = JuryChoice.mean,
    candidates: CandidatesOption = None,
    price_in: PriceInOption = None,
    price_out: PriceOutOption = None,
    max_cost: MaxCostOption = None,
    models: ModelsOption = None,
    max_failure_rate: MaxFailureRateOption = 0.25,
    max_retries: MaxRetriesOption = 5,
    parse_retries: ParseRetriesOption = 1,
    seed: SeedOption = 0,
    bootstrap: BootstrapOption = DEFAULT_B,
    level: CiOption = DEFAULT_LEVEL,
    score_mode: ScoreModeOption = None,
    per_criterion: PerCriterionOption = False,
    no_reference: NoReferenceOption = False,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send the model calls through the provider's batch API (openai/<model>; "
            "about half price, results within the batch window). Batch ids are kept in the "
            "run directory: the same command resumes polling.",
        ),
    ] = False,
    batch_poll: Annotated[
        float, typer.Option(min=0.01, help="Seconds between batch status polls.")
    ] = 30.0,
    quiet: QuietOption = False,
    retry_failed: RetryFailedOption = False,
    judge_artifact: JudgeArtifactOption = None,
    *,
    opts: SharedOptions,
) -> None:
    """Judge candidates (or the pseudo-models) into a resumable run directory."""
    import gc
    import logging

    collecting = gc.isenabled()
    gc.disable()  # set-up ahead: imports and objects that live to the end, no garbage cycles
    try:
        from attune_judge.judges import BASELINES
        from attune_judge.lm import start_request_cache

        setup_logging(quiet)
        data = _score_data(data, candidates)
        if rubric not in BASELINES and judge_artifact is None:  # shards open while we import
            start_request_cache(opts.model(lm).cache_dir)
        from attune_judge.runner import ScoreConfig, run_score

        if batch and not quiet:  # submitted / polled / finished lines on stderr
            logging.getLogger("attune_judge.batch").setLevel(logging.INFO)
        config = ScoreConfig(
            data=data,
            out=out,
            rubric=resolve_judge_artifact(judge_artifact) or rubric,
            lm=(lm[0] if len(lm) == 1 else list(lm)) if lm else "local",
            jury=jury.value,
            price_in=price_in,
            price_out=price_out,
            max_cost=max_cost,
            lm_settings=opts.model(lm),
            score_mode=score_mode.value if score_mode is not None else None,
            per_criterion=per_criterion,
            use_reference=False if no_reference else None,
            candidates=candidates,
            models=split_csv(models),
            max_failure_rate=max_failure_rate,
            max_retries=max_retries,
            parse_retries=parse_retries,
            seed=seed,
            B=bootstrap,
            level=level,
            **opts.execution(),
            batch=batch,
            batch_poll_s=batch_poll,
            quiet=quiet,
            retry_failed=retry_failed,
        )
    finally:
        if collecting:  # frozen: no later full collection walks DSPy's, numpy's, ... heap again
            gc.freeze()
            gc.enable()
    result = run_score(config)
    _print_result(result)
    warn_degenerate(getattr(result.summary, "judges", None))
    written = write_run_report(result.run_dir)
    if written is not None:
        print(f"report: {written[0]}  {written[1]}")
    exit_if_stopped(result)


def _score_data(data: Path | None, candidates: Path | None) -> Path:
    """DATA, or the Inspect log given as ``--candidates`` (whose samples are the items)."""
    from attune_judge.data.adapters import is_inspect_log

    if data is not None:
        return data
    if candidates is not None and is_inspect_log(candidates):
        return candidates
    raise UserError(
        "score needs DATA (AttuneBench data or JudgeItem JSONL); only an Inspect log given "
        "as --candidates goes without it"
    )


@shared_options(MODEL, EXECUTION)
def generate(
    data: Annotated[Path, typer.Argument(help="AttuneBench data (folder/.json/.jsonl).")],
    out: Annotated[
        Path, typer.Option("-o", "--out", help="Candidates JSONL (appended, resumable).")
    ],
    lm: LmOption = "local",
    name: Annotated[
        str | None, typer.Option(help="Model name written into the candidates (default: --lm).")
    ] = None,
    max_retries: MaxRetriesOption = 5,
    parse_retries: ParseRetriesOption = 1,
    seed: SeedOption = 0,
    quiet: QuietOption = False,
    *,
    opts: SharedOptions,
) -> None:
    """Draft a reply at every annotated turn with a model (AttuneBench's draft step)."""
    from attune_judge.runner import RetryPolicy, run_generate

    setup_logging(quiet)
    result = run_generate(
        data,
        out,
        lm=opts.model(lm, seed=seed),
        name=name,
        retry=RetryPolicy(max_retries=max_retries, seed=seed, parse_retries=parse_retries),
        quiet=quiet,
        **_generate_execution(opts),
    )
    print(
        f"{result.out}: {result.n_written} replies written by {result.model!r}, "
        f"{result.n_skipped} already there, {len(result.errors)} failed "
        f"({result.wall_time_s:.1f} s)"
    )
    if result.errors:
        for line in result.errors[:10]:
            print(f"  {line}", file=sys.stderr)
        print(
            "error: some replies failed and were not written; the same command retries them "
            "(transient errors may pass; a reply the model cannot format will fail again)",
            file=sys.stderr,
        )
        raise typer.Exit(3)


def _generate_execution(opts: SharedOptions) -> dict[str, Any]:
    """``run_generate``'s execution keywords (its executor keyword is ``executor_kind``)."""
    kwargs = opts.execution()
    kwargs["executor_kind"] = kwargs.pop("executor")
    kwargs.pop("adaptive")  # drafting keeps a fixed window (its results carry no rate limits)
    return kwargs


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``generate`` to ``app``."""
    app.command("score")(score)
    app.command("generate")(generate)
