"""``attune-judge align``: align a judge to people's ratings or pairwise choices (thin: parse, call
:func:`attune_judge.align.align_judge`, print)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from attune_judge.cli._options import (
    LmOption,
)
from attune_judge.cli._shared import MODEL, SharedOptions, shared_options
from attune_judge.cli._stats import DEFAULT_B, BootstrapOption
from attune_judge.errors import UserError

__all__ = ["JudgeArtifactOption", "register", "resolve_judge_artifact"]

JudgeArtifactOption = Annotated[
    Path | None,
    typer.Option(
        "--judge",
        help="An aligned judge directory (from `attune-judge align`); used instead of --rubric.",
    ),
]


def resolve_judge_artifact(path: Path | None) -> str | None:
    """``--judge PATH`` as the rubric reference ``build_judge`` loads (``UserError`` if not one)."""
    if path is None:
        return None
    from attune_judge.align import is_aligned_judge

    if not is_aligned_judge(path):
        raise UserError(f"{path}: not an aligned judge (no aligned-judge.json); see `align`")
    return str(path)


class OptimizerChoice(StrEnum):
    """DSPy optimizers ``align`` can run."""

    labeled_fewshot = "labeled-fewshot"
    bootstrap_fewshot = "bootstrap-fewshot"
    mipro = "mipro"
    gepa = "gepa"


class MethodChoice(StrEnum):
    """How ``align`` fits the judge to people."""

    optimize = "optimize"
    calibrate = "calibrate"


class MetricChoice(StrEnum):
    """Per-item agreement with the people."""

    ordinal = "ordinal"
    quadratic = "quadratic"
    exact = "exact"
    half = "half"


def _fractions(text: str) -> tuple[float, float, float]:
    try:
        a, b, c = (float(v) for v in text.split(","))
    except ValueError:
        raise UserError(
            f"--split must be TRAIN,DEV,TEST shares (e.g. 0.4,0.2,0.4), not {text!r}"
        ) from None
    if min(a, b, c) <= 0:
        raise UserError(f"--split shares must be positive, not {text!r}")
    return a, b, c


@shared_options(MODEL)
def align(
    labels: Annotated[
        str,
        typer.Argument(
            help="Human labels: a shipped set (empathic-communication-epitome, duo, ...; see "
            "`validate --set`), a Rating JSONL or a Preference JSONL (with --items)."
        ),
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Aligned-judge directory (new).")],
    items: Annotated[
        Path | None,
        typer.Option(
            help="JudgeItem JSONL of the rated items (label files); for preferences the pairs, "
            "the turns, or the AttuneBench data they came from."
        ),
    ] = None,
    rubric: Annotated[
        str | None,
        typer.Option(
            help="Rubric (default: the set's; attunebench-reference for ratings, "
            "attunebench-pairwise for preferences)."
        ),
    ] = None,
    lm: LmOption = "local",
    optimizer: Annotated[
        OptimizerChoice, typer.Option(help="DSPy optimizer.")
    ] = OptimizerChoice.bootstrap_fewshot,
    metric: Annotated[
        MetricChoice | None,
        typer.Option(
            help="Agreement per item. Ratings: ordinal (1 − |Δ|/range; default), quadratic, "
            "exact. Preferences: exact (same verdict; default), half (a tie vs a winner ½)."
        ),
    ] = None,
    max_demos: Annotated[int, typer.Option(min=0, help="Labelled demonstrations.")] = 4,
    max_bootstrapped_demos: Annotated[
        int, typer.Option(min=0, help="Bootstrapped demonstrations (bootstrap-fewshot, mipro).")
    ] = 4,
    num_candidates: Annotated[
        int, typer.Option(min=1, help="Random-search candidate programs (bootstrap-fewshot).")
    ] = 4,
    split: Annotated[
        str, typer.Option(help="Shares of conversations: TRAIN,DEV,TEST.")
    ] = "0.4,0.2,0.4",
    seed: Annotated[
        int, typer.Option(help="Seed of the split, optimizer and bootstrap.", envvar="ATTUNE_SEED")
    ] = 0,
    limit: Annotated[
        int | None, typer.Option(min=3, help="Use only the first N conversations (trials).")
    ] = None,
    max_calls: Annotated[
        int | None, typer.Option(min=1, help="Refuse to start above this many model calls.")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(min=0.0, help="Refuse to start above this cost (USD).")
    ] = None,
    reference: Annotated[
        bool | None,
        typer.Option("--reference/--no-reference", help="Show the judge the reference reply."),
    ] = None,
    reasoning: Annotated[bool, typer.Option(help="Let the judge reason first.")] = False,
    threads: Annotated[int, typer.Option(min=1, help="Parallel calls in the optimizer.")] = 1,
    max_concurrency: Annotated[
        int, typer.Option(min=1, help="Judgments in flight (held-out evaluation).")
    ] = 4,
    score_map: Annotated[bool, typer.Option(help="Fit and save the monotone score map.")] = True,
    method: Annotated[
        MethodChoice,
        typer.Option(
            help="optimize: a DSPy optimizer on the judge's program; calibrate: an ordinal head "
            "with rater offsets on the judge's score distributions (expected-score mode, "
            "LLM-Rubric)."
        ),
    ] = MethodChoice.optimize,
    reply_features: Annotated[
        bool,
        typer.Option(
            help="--method calibrate: the reply's length and empathy-word count are features of "
            "the head too (the proof shows the head with and without them)."
        ),
    ] = False,
    replicates: BootstrapOption = DEFAULT_B,
    *,
    opts: SharedOptions,
) -> None:
    """Align a judge to people: optimise its DSPy program on their ratings (rubric judge) or
    pairwise choices (pairwise judge), prove it on held-out conversations, and save it as a
    judge usable with --judge."""
    from attune_judge.align import AlignConfig, OptimizerSettings, align_judge

    config = AlignConfig(
        labels=labels,
        out=out,
        items=items,
        rubric=rubric,
        lm=lm,
        api_base=opts.api_base,
        lm_options=opts.model(lm).decoding_options(),
        use_reference=reference,
        reasoning=reasoning,
        optimizer=OptimizerSettings(
            name=optimizer.value,
            max_labeled_demos=max_demos,
            max_bootstrapped_demos=max_bootstrapped_demos,
            num_candidates=num_candidates,
            num_threads=threads,
            seed=seed,
        ),
        metric=metric.value if metric is not None else None,
        split=_fractions(split),
        seed=seed,
        limit=limit,
        max_calls=max_calls,
        max_cost=max_cost,
        max_concurrency=max_concurrency,
        B=replicates,
        score_map=score_map,
        method=method.value,
        reply_features=reply_features,
    )
    if method is MethodChoice.calibrate:
        _print_calibrated(config)
        return
    res = align_judge(config)
    p = res.proof

    from attune_judge.calibration import fmt_estimate

    def line(name: str, m: object) -> None:
        if m is not None:
            print(f"  {name:<34} {fmt_estimate(m.estimate, m.lower, m.upper)}")  # type: ignore[attr-defined]

    print(f"held-out agreement ({p.metric}) on {p.n_items} items, {p.n_clusters} conversations:")
    line("unaligned judge", p.before)
    line("aligned judge", p.after)
    line("aligned + score map (cross-fitted)", p.after_mapped)
    line(f"length only ({p.length_rule})", p.length_baseline)
    line("position only (A always wins)", p.position_baseline)
    line("human ceiling", p.human_ceiling)
    line("improvement", p.improvement)
    if p.inconsistent is not None:
        print(
            f"  pairs with opposite winners in the two orders: before {p.inconsistent['before']}"
            f", after {p.inconsistent['after']} (count as disagreeing)"
        )
    print(p.verdict)
    print(
        f"aligned judge: {res.out} (model calls: optimizer {res.optimizer_calls}, evaluation "
        f"{res.evaluation_calls}); use it with --judge {res.out}"
    )
    print(f"report: {Path(res.out) / 'report.md'} and report.html ({res.seconds:.0f} s)")


def _print_calibrated(config: object) -> None:
    from attune_judge.align import calibrate_judge
    from attune_judge.calibration import fmt_estimate

    res = calibrate_judge(config)
    p = res.proof
    print(
        f"held-out test split: {p.n_items} items, {p.n_clusters} conversations "
        f"({p.n_failed} failed judgments); RMSE / Spearman ρ / κ_qw with the people's mean:"
    )
    for c, cp in p.criteria.items():
        print(f"  {c}:")
        rows = [*cp.systems.items(), *(("human ceiling", cp.human_ceiling),)]
        rows += [(f"Δ {k}", v) for k, v in cp.differences.items()]
        for name, m in rows:
            if m:
                cells = "  ".join(fmt_estimate(v.estimate, v.lower, v.upper) for v in m.values())
                print(f"    {name:<34} {cells}")
    print(p.verdict)
    print(
        f"calibrated judge: {res.out} ({res.calls} model requests); use it with --judge {res.out}"
    )
    print(f"report: {Path(res.out) / 'report.md'} ({res.seconds:.0f} s)")


def register(app: typer.Typer) -> None:
    """Add ``align`` to the app."""
    app.command("align")(align)
