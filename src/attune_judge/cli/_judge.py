"""``attune-judge judge ITEM.json``: judge one item and print the Judgment as JSON.

Thin: read the item, build the judge with :func:`attune_judge.judges.build_judge`, judge,
print. Model settings come from ``ATTUNE_*`` variables, overridden by the options.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attune_judge.cli._align import JudgeArtifactOption, resolve_judge_artifact
from attune_judge.cli._options import (
    ApiBaseOption,
    JuryChoice,
    JuryOption,
    LmsOption,
    MaxTokensOption,
    PerCriterionOption,
    ResponseFormatOption,
    ScoreModeOption,
    TemperatureOption,
    TimeoutOption,
)

if TYPE_CHECKING:
    from attune_judge.data import JudgeItem

__all__ = ["register"]


def read_item(path: Path) -> JudgeItem:
    """One ``JudgeItem`` from a JSON file; problems name the file and the field."""
    import json

    from pydantic import ValidationError

    from attune_judge.data import JudgeItem, format_validation_error, read_utf8
    from attune_judge.errors import UserError

    if path.is_dir():
        raise UserError(f"{path}: is a folder; expected a JSON file holding one judge item")
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    try:
        data = json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        hint = (
            " (one item per file: `judge` takes a .json holding one JudgeItem, not a JSONL)"
            if exc.msg == "Extra data"
            else ""
        )
        raise UserError(f"{path}: not valid JSON: {exc}{hint}") from None
    try:
        return JudgeItem.model_validate(data)
    except ValidationError as exc:
        problems = format_validation_error(exc, str(path))
        raise UserError(f"{path}: not a judge item", problems=problems) from None


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
    api_base: ApiBaseOption = None,
    temperature: TemperatureOption = None,
    max_tokens: MaxTokensOption = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed.", envvar="ATTUNE_SEED")] = None,
    response_format: ResponseFormatOption = None,
    timeout: TimeoutOption = None,
    no_reference: Annotated[
        bool, typer.Option("--no-reference", help="Withhold the reference from the judge.")
    ] = False,
    reasoning: Annotated[
        bool, typer.Option("--reasoning", help="Let the judge reason before scoring.")
    ] = False,
    score_mode: ScoreModeOption = None,
    per_criterion: PerCriterionOption = False,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the request cache.")] = False,
    judge_artifact: JudgeArtifactOption = None,
) -> None:
    """Judge one item and print the Judgment as JSON."""
    import json

    from attune_judge._secrets import redact  # a key echoed by the model is never printed
    from attune_judge.judges import BASELINES, Jury, build_judge
    from attune_judge.lm import LMSettings, configure_cache

    rubric = resolve_judge_artifact(judge_artifact) or rubric
    item = read_item(item_path)
    lms = list(lm or []) or ["local"]
    settings = LMSettings.from_env(
        lm=lms[0],
        api_base=api_base,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        response_format=response_format.value if response_format else None,
        timeout=timeout,
        cache=False if no_cache else None,
    )
    options: dict[str, object] = {"reasoning": reasoning} if rubric not in BASELINES else {}
    if no_reference:
        options["use_reference"] = False
    if rubric not in BASELINES:
        if score_mode is not None:
            options["score_mode"] = score_mode.value
        if per_criterion:
            options["per_criterion"] = True
    if rubric in BASELINES:
        print(redact(build_judge(rubric).judge(item).model_dump_json(indent=2)))
        return
    configure_cache(settings.cache_dir, enabled=settings.cache)
    judges = [build_judge(rubric, m, **options, **_lm_options(settings)) for m in lms]
    if len(judges) == 1:
        print(redact(judges[0].judge(item).model_dump_json(indent=2)))
    elif jury is JuryChoice.none:
        rows = [j.judge(item).model_dump(mode="json") for j in judges]
        print(redact(json.dumps(rows, indent=2)))
    else:
        combined = Jury(judges, method=jury.value)  # type: ignore[arg-type]
        print(redact(combined.judge(item).model_dump_json(indent=2)))


def _lm_options(settings: object) -> dict[str, object]:
    from attune_judge.lm import LMSettings

    assert isinstance(settings, LMSettings)
    return settings.model_dump(exclude={"lm", "cache_dir"})


def register(app: typer.Typer) -> None:
    """Add the ``judge`` command."""
    app.command("judge")(judge_command)
