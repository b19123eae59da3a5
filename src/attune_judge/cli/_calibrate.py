"""CLI: ``calibrate`` (judge vs human labels) and ``rank`` (leaderboard with rank sets).

Thin shell: parse, one call to :mod:`attune_judge.validate` (:func:`calibrate_files`,
:func:`rank_scores`, :func:`ppi_rank`), print Markdown or JSON. Heavy imports stay inside the
commands so ``attune-judge --help`` is fast.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from attune_judge.cli._options import split_csv
from attune_judge.cli._stats import DEFAULT_B, DEFAULT_LEVEL, BootstrapOption, CiOption
from attune_judge.errors import UserError

__all__ = ["register"]

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of Markdown.")]


def parse_scale(text: str | None, option: str = "--human-scale") -> tuple[float, float] | None:
    """``"1,5"`` → ``(1.0, 5.0)``; ``None`` stays ``None``; ``option`` names the option in
    the error."""
    if text is None:
        return None
    try:
        lo, hi = (float(v) for v in text.split(","))
    except ValueError:
        raise UserError(f"{option} must be LOW,HIGH (e.g. 1,5), not {text!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise UserError(f"{option}: HIGH must exceed LOW, both finite, not {text!r}")
    return lo, hi


def _emit(text: str, data: dict[str, Any], as_json: bool, out: Path | None) -> None:
    """Print the result, then write it to ``out`` (printed first: a bad ``out`` loses nothing)."""
    body = json.dumps(data, indent=2, default=str) + "\n" if as_json else text
    if as_json or not sys.stdout.isatty():
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(body, encoding="utf-8")


def calibrate(
    human: Annotated[Path, typer.Option("--human", help="Human Rating or Preference JSONL.")],
    judge: Annotated[
        Path,
        typer.Option(
            "--judge",
            help="Judge Rating/Preference JSONL, a run directory, or an Inspect AI log "
            "(.eval/.json or a folder; its scorers' scores, joined by sample id).",
        ),
    ],
    measurement: Annotated[
        str, typer.Option(help="Level of measurement for α: nominal, ordinal, interval, ratio.")
    ] = "ordinal",
    old_measurement: Annotated[str | None, typer.Option("--level", hidden=True)] = None,
    by: Annotated[str, typer.Option(help="Split the report by: dimension.")] = "dimension",
    dimension: Annotated[
        list[str] | None, typer.Option(help="Only these dimensions (repeatable).")
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(help="Declared rating scale, e.g. 1,2,3,4,5 (weighted κ uses its index)."),
    ] = None,
    as_json: JsonOption = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Run directory: summary.json, report.md and report.html with figures.",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", help="Also write the Markdown (or JSON) here.")
    ] = None,
    B: BootstrapOption = DEFAULT_B,
    seed: Annotated[int, typer.Option(help="Seed of the cluster bootstrap.")] = 0,
    level: CiOption = DEFAULT_LEVEL,
    epsilon: Annotated[float, typer.Option(help="ε of the alternative annotator test.")] = 0.2,
    tie_policy: Annotated[
        str, typer.Option(help="Preferences: strict, half or exclude.")
    ] = "strict",
    margin: Annotated[
        float, typer.Option(help="Preferences from scores: |Δscore| ≤ margin is a tie.")
    ] = 0.0,
    items: Annotated[
        Path | None,
        typer.Option(
            "--items",
            help="JudgeItem JSONL of the judged items: adds the length-only and lexicon "
            "baselines beside the judge (needs Judgment records or a run directory).",
        ),
    ] = None,
    scorer: Annotated[
        list[str] | None,
        typer.Option(
            help="--judge LOG: only this Inspect scorer (repeatable; default all, as a panel)."
        ),
    ] = None,
) -> None:
    """Agreement of a judge with people (ratings or pairwise preferences), with intervals."""
    from attune_judge.validate import calibrate_files

    if by != "dimension":
        raise UserError(f"--by supports only 'dimension', not {by!r}")
    try:
        scale_vals = [float(v) for v in scale.split(",")] if scale else None
    except ValueError:
        raise UserError(f"--scale must be comma-separated numbers, not {scale!r}") from None
    outcome = calibrate_files(
        human,
        judge,
        measurement=old_measurement or measurement,  # --level: the old name, kept hidden
        dimensions=dimension,
        scale=scale_vals,
        B=B,
        seed=seed,
        level=level,
        epsilon=epsilon,
        tie_policy=tie_policy,
        margin=margin,
        items=items,
        out=out,
        scorers=scorer,
    )
    _emit(outcome.markdown, outcome.data, as_json, output)
    if outcome.report_files is not None:
        md, html = outcome.report_files
        print(f"report: {md} and {html.name}", file=sys.stderr)


def _rank_controlled(
    source: Path | None,
    *,
    pairs: Path | None,
    control: str | None,
    items: Path | None,
    report: Path | None,
    field: str,
    judge_id: str | None,
    B: int,
    seed: int,
    level: float,
    as_json: bool,
    output: Path | None,
    scale: str | None = None,
) -> None:
    """``rank --pairs`` / ``rank SOURCE --control``: the controlled ranking beside the raw."""
    from attune_judge.validate._rank import _pairwise_judgments
    from attune_judge.validate._style import (
        controlled_markdown,
        length_means_markdown,
        parse_control,
        rank_controlled_run,
        rank_length_controlled_scores,
        rank_pairs,
        write_controlled_report,
    )

    features = parse_control(control or "length")
    if pairs is not None:
        if source is not None:
            raise UserError("give either a run/scores SOURCE or --pairs FILE, not both")
        styled = rank_pairs(pairs, control=features, B=B, seed=seed, level=level)
    elif source is None:
        raise UserError("--control needs a pairwise run (SOURCE) or --pairs FILE")
    elif _pairwise_judgments(source, judge_id) is None:  # a rated run or a scores table
        if features != ("length",):
            raise UserError("--control markdown is for pairwise runs; rated runs: length")
        means = rank_length_controlled_scores(
            source,
            items,
            field=field,
            judge_id=judge_id,
            B=B,
            seed=seed,
            level=level,
            scale=parse_scale(scale, "--scale"),
        )
        for warning in means.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        _emit(length_means_markdown(means), means.model_dump(mode="json"), as_json, output)
        if report is not None:
            md, html = write_controlled_report(
                report, means, source=source, arguments={"source": source, "control": control}
            )
            print(f"report: {md} and {html.name}", file=sys.stderr)
        return
    else:
        styled = rank_controlled_run(
            source, items, control=features, judge_id=judge_id, B=B, seed=seed, level=level
        )
    for warning in styled.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    _emit(controlled_markdown(styled), styled.model_dump(mode="json"), as_json, output)
    if report is not None:
        src = pairs if pairs is not None else source
        md, html = write_controlled_report(
            report, styled, source=Path(str(src)), arguments={"source": src, "control": control}
        )
        print(f"report: {md} and {html.name}", file=sys.stderr)
    return


def rank(
    source: Annotated[
        Path | None,
        typer.Argument(
            help="Run directory, scores JSONL/CSV (model, cluster, score), or an Inspect AI "
            "log or folder of logs."
        ),
    ] = None,
    as_json: JsonOption = False,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Also write here.")] = None,
    field: Annotated[
        str, typer.Option(help="Judgment score: normalized or overall.")
    ] = "normalized",
    judge_id: Annotated[str | None, typer.Option(help="Judge to rank by (run dirs).")] = None,
    B: BootstrapOption = DEFAULT_B,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and of the rank sets.")] = 0,
    level: CiOption = DEFAULT_LEVEL,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale",
            help="LOW,HIGH of a scores table's scale (e.g. 1,5): intervals stay on it. "
            "Judgments (a run) record their own scale; --scale must agree with it.",
        ),
    ] = None,
    human: Annotated[
        Path | None,
        typer.Option(
            "--human",
            help="Human Rating JSONL on some of the judged items: correct the judge's means "
            "and differences with prediction-powered inference (PPI++).",
        ),
    ] = None,
    dimension: Annotated[
        str | None, typer.Option(help="--human: the human dimension (default overall).")
    ] = None,
    human_raters: Annotated[
        str | None,
        typer.Option(help="--human: only these raters (comma-separated; default all, averaged)."),
    ] = None,
    human_scale: Annotated[
        str | None,
        typer.Option(help="--human: LOW,HIGH of the human scale, mapped to 0-1 (e.g. 1,5)."),
    ] = None,
    method: Annotated[
        str,
        typer.Option(
            help="--human: ppi (PPI++ means) or rogan-gladen (a pass/fail judge's pass rate per "
            "model corrected for its TPR/TNR on the labelled items, PPI++ beside)."
        ),
    ] = "ppi",
    clip_lambda: Annotated[
        bool, typer.Option(help="--human: clip the power-tuning λ to [0, 1].")
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option(
            help="--human or --control/--pairs: also write summary.json and report.md/.html here."
        ),
    ] = None,
    pairs: Annotated[
        Path | None,
        typer.Option(
            "--pairs",
            help="Long table of comparisons (JSONL/CSV: model, opponent, cluster, len_model, "
            "len_opponent, preference) to rank with style under control (see README).",
        ),
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(
            "--control",
            help="Control for style: length, or length,markdown (a pairwise run or --pairs).",
        ),
    ] = None,
    items: Annotated[
        Path | None,
        typer.Option("--items", help="--control on a run: the pairwise JudgeItem JSONL judged."),
    ] = None,
    scorer: Annotated[
        str | None,
        typer.Option(
            help="Inspect log: the scorer to rank by (default: the only one, or `jury`, the "
            "mean of several 0-1 scorers)."
        ),
    ] = None,
) -> None:
    """Leaderboard with paired cluster-bootstrap intervals and confidence sets for ranks.

    With ``--human``: the prediction-powered leaderboard (PPI++): judge-only, human-only and
    corrected means and differences side by side, with the effective-sample-size gain.
    """
    from attune_judge import calibration as cal

    if pairs is not None or control is not None:
        _rank_controlled(
            source,
            pairs=pairs,
            control=control,
            items=items,
            report=report,
            field=field,
            judge_id=judge_id,
            B=B,
            seed=seed,
            level=level,
            as_json=as_json,
            output=output,
            scale=scale,
        )
        return
    if source is None:
        raise UserError("rank needs a SOURCE (run directory or scores file), or --pairs FILE")
    from attune_judge.data.adapters import is_inspect_log
    from attune_judge.validate import (
        pairwise_ranking_markdown,
        ppi_rank,
        rank_pairwise,
        rank_scores,
    )

    if human is not None:
        res = ppi_rank(
            source,
            human,
            judge_id=judge_id,
            field=field,
            dimension=dimension,
            raters=split_csv(human_raters),
            human_scale=parse_scale(human_scale),
            level=level,
            clip=clip_lambda,
            report_dir=report,
            scorer=scorer,
            method=method,
            B=B,
            seed=seed,
        )
        if res.report_files is not None:
            md, html = res.report_files
            print(f"report: {md} and {html.name}", file=sys.stderr)
        for warning in res.data.get("warnings") or []:
            print(f"warning: {warning}", file=sys.stderr)
        _emit(res.markdown, res.data, as_json, output)
        return
    pair = (
        None
        if scorer is not None or is_inspect_log(source)
        else rank_pairwise(source, judge_id=judge_id, B=B, seed=seed, level=level)
    )
    if pair is not None:  # a pairwise judge: its verdicts rank the compared replies
        data = {"rankings": [r.as_json() for r in pair]}
        _emit(pairwise_ranking_markdown(pair), data, as_json, output)
        return
    lb = rank_scores(
        source,
        field=field,
        judge_id=judge_id,
        B=B,
        seed=seed,
        level=level,
        scorer=scorer,
        scale=parse_scale(scale, "--scale"),
    )
    _emit(cal.leaderboard_markdown(lb), lb.model_dump(), as_json, output)


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` and ``rank`` to the app."""
    app.command("calibrate")(calibrate)
    app.command("rank")(rank)
