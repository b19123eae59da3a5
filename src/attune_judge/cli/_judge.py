"""``attune-judge judge ITEM.json``: judge one item and print the Judgment as JSON.

Thin: parse, :func:`attune_judge.judges.read_judge_item` and
:func:`attune_judge.judges.judge_item`, print. Model settings come from ``ATTUNE_*``
variables, overridden by the options.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from attune_judge._secrets import redact  # a key echoed by the model is never printed
from attune_judge.cli._align import JudgeArtifactOption, resolve_judge_artifact
from attune_judge.cli._options import (
    JuryChoice,
    JuryOption,
    LmsOption,
    NoReferenceOption,
    PerCriterionOption,
    ScoreModeOption,
)
from attune_judge.cli._shared import MODEL, SharedOptions, shared_options

__all__ = ["register"]


@shared_options(MODEL)
def judge_command(
    item_path: Annotated[Path, typer.Argument(help="A JSON file holding one judge item.")],
    rubric: Annotated[
        str,
        typer.Option(
            "--rubric", "-r", help="Built-in rubric name, a rubric .yaml path, or length/lexical."
        ),
    ] = "attunebench-reference",
    lm: LmsOption = None,
    jury: JuryOption = JuryChoice.mean,
    seed: Annotated[int | None, typer.Option(help="Sampling seed.", envvar="ATTUNE_SEED")] = None,
    no_reference: NoReferenceOption = False,
    reasoning: Annotated[
        bool, typer.Option("--reasoning", help="Let the judge reason before scoring.")
    ] = False,
    score_mode: ScoreModeOption = None,
    per_criterion: PerCriterionOption = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the request cache.")] = False,
    judge_artifact: JudgeArtifactOption = None,
    *,
    opts: SharedOptions,
) -> None:
    """Judge one item and print the Judgment as JSON (exit 3 when it is not ok: lm_error,
    parse_error or refused)."""
    import json

    from attune_judge.judges import JudgeOptions, judge_item, read_judge_item

    rubric = resolve_judge_artifact(judge_artifact) or rubric
    item = read_judge_item(item_path)
    lms = list(lm or []) or ["local"]
    result = judge_item(
        item,
        rubric,
        lms,
        jury=jury.value,
        settings=opts.model(lms, seed=seed, cache=False if no_cache else None),
        options=JudgeOptions(
            use_reference=False if no_reference else None,
            reasoning=reasoning,
            score_mode=score_mode.value if score_mode is not None else None,
            per_criterion=True if per_criterion else None,
        ),
    )
    if isinstance(result, list):
        print(redact(json.dumps([j.model_dump(mode="json") for j in result], indent=2)))
    else:
        print(redact(result.model_dump_json(indent=2)))
    failed = [j for j in (result if isinstance(result, list) else [result]) if j.status != "ok"]
    for j in failed:  # the JSON above says why; the exit code says that it failed
        print(f"error: judgment {j.status}: {redact(str(j.error or ''))}", file=sys.stderr)
    if failed:
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    """Add the ``judge`` command."""
    app.command("judge")(judge_command)
