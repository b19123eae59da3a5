"""``attune-judge data ...``: validate AttuneBench files and export them as generic records.

Thin: each command loads with :func:`attune_judge.data.load_attunebench`, calls one library
function and prints. Problems are ``UserError`` (exit 2, one line per problem).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from attune_judge.data import AttuneBenchSummary

__all__ = ["register"]

data_app = typer.Typer(
    help="Check AttuneBench conversation files and export them as records (JSONL).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

PathArg = Annotated[
    Path,
    typer.Argument(help="A folder of conversation_N.json files, one .json file, or a .jsonl."),
]
OutOpt = Annotated[Path, typer.Option("-o", "--out", help="The JSONL file to write.")]


class CandidateChoice(StrEnum):
    """Which response of each turn becomes the judge item's candidate."""

    original = "original"
    llm_improved = "llm_improved"
    human_edited = "human_edited"


class AdapterName(StrEnum):
    """The public datasets an adapter exists for."""

    empathic_communication = "empathic-communication"
    duo = "duo"
    ieval = "ieval"
    esconv = "esconv"


def _print_summary(summary: AttuneBenchSummary, path: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"AttuneBench: {path}", show_header=True)
    table.add_column("what")
    table.add_column("count", justify="right")
    rows = [
        ("conversations", summary.conversations),
        ("turns", summary.turns),
        ("turns with a reference (human-edited)", summary.turns_with_reference),
        ("turns with an LLM-improved alternate", summary.turns_with_llm_improved),
        ("turns with blinded alternates", summary.blinded_turns),
        ("pairwise comparisons", summary.pairwise_comparisons),
        *((f"  pairwise {q}", n) for q, n in summary.pairwise_by_question.items()),
        ("  pairwise without a winner", summary.pairwise_unanswered),
        ("behaviour answers (item x turn)", summary.behaviour_answers),
        ("  with an observed answer", summary.behaviour_observed_answered),
        ("  with a preferred answer", summary.behaviour_preferred_answered),
        ("  applicable (not both na)", summary.behaviour_applicable),
        ("emotion tags", summary.emotion_tags),
        ("  turns without emotion tags", summary.turns_without_emotion_tags),
        ("conversations with pre-PANAS", summary.pre_panas),
        ("conversations with post-PANAS", summary.post_panas),
        ("conversations with a participant profile", summary.participant_profiles),
    ]
    for label, count in rows:
        table.add_row(label, str(count))
    Console().print(table)


@data_app.command("validate")
def validate(
    path: PathArg,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the counts as JSON instead of a table.")
    ] = False,
) -> None:
    """Load AttuneBench conversations; print counts, or every problem (exit 2)."""
    from attune_judge.data import load_attunebench, summarize_attunebench

    summary = summarize_attunebench(load_attunebench(path))
    if as_json:
        print(json.dumps(summary.model_dump(), indent=2))
    else:
        _print_summary(summary, path)


@data_app.command("items")
def items(
    path: PathArg,
    out: OutOpt,
    candidate: Annotated[
        CandidateChoice, typer.Option(help="Which response of each turn to judge.")
    ] = CandidateChoice.original,
    blinded: Annotated[
        bool,
        typer.Option(help="Include turns whose alternates are blinded (alternate1/alternate2)."),
    ] = True,
) -> None:
    """Write one JudgeItem per turn that has a human-edited reference."""
    from attune_judge.data import attunebench_to_judge_items, load_attunebench, write_jsonl

    records = attunebench_to_judge_items(
        load_attunebench(path), candidate.value, include_blinded=blinded
    )
    n = write_jsonl(out, records)
    print(f"{n} judge items ({candidate.value}) -> {out}")


@data_app.command("preferences")
def preferences(path: PathArg, out: OutOpt) -> None:
    """Write every pairwise comparison as a Preference record."""
    from attune_judge.data import attunebench_to_preferences, load_attunebench, write_jsonl

    n = write_jsonl(out, attunebench_to_preferences(load_attunebench(path)))
    print(f"{n} preferences -> {out}")


@data_app.command("ratings")
def ratings(
    path: PathArg,
    out: OutOpt,
    llm_value: Annotated[
        bool, typer.Option("--llm-value", help="Also export llmValue as rater llm_annotator.")
    ] = False,
) -> None:
    """Write the participant's behaviour answers (observed, preferred) as Rating records."""
    from attune_judge.data import attunebench_to_ratings, load_attunebench, write_jsonl

    records = attunebench_to_ratings(load_attunebench(path), include_llm_value=llm_value)
    n = write_jsonl(out, records)
    print(f"{n} ratings -> {out}")


@data_app.command("dump")
def dump(path: PathArg, out: OutOpt) -> None:
    """Write the conversations as JSON Lines in the official format (one per line)."""
    from attune_judge.data import load_attunebench, write_attunebench_jsonl

    n = write_attunebench_jsonl(out, load_attunebench(path))
    print(f"{n} conversations -> {out}")


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group (and the adapters' ``data convert``) to ``app``."""

    register_convert(data_app)
    app.add_typer(data_app, name="data")


def register_convert(data_app: typer.Typer) -> None:
    """Add ``convert`` to the ``data`` command group."""

    @data_app.command("convert")
    def _convert(
        dataset: Annotated[AdapterName, typer.Argument(help="Which dataset SRC holds.")],
        src: Annotated[Path, typer.Argument(help="The dataset's folder.")],
        out: Annotated[Path, typer.Option("-o", "--out", help="Folder to write to.")],
        item_level: Annotated[
            str,
            typer.Option(
                help="ESConv items: message (one per supporter message), conversation, or both."
            ),
        ] = "both",
    ) -> None:
        """Convert a public dataset to ratings/preferences/items JSONL plus report.json."""
        from attune_judge.data.adapters import convert

        report = convert(dataset.value, src, out, item_level=item_level)
        counts = report.get("counts", {})
        unmatched = report.get("unmatched", {})
        assert isinstance(counts, dict) and isinstance(unmatched, dict)
        print(
            f"{dataset.value}: {counts.get('ratings', 0)} ratings, "
            f"{counts.get('preferences', 0)} preferences, {counts.get('items', 0)} items -> {out}"
        )
        for key, ids in unmatched.items():
            if ids:
                print(f"  unmatched: {key}: {len(ids)} (listed in {out / 'report.json'})")
