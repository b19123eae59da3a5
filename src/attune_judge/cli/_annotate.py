"""CLI: ``annotate`` (the labelling server), ``annotate sample``, ``annotate export``,
``annotate import``.

``attune-judge annotate ITEMS --task ... --rubric ... --db LABELS.sqlite`` is the ``serve``
command: a first argument that is not a sub-command name goes to ``serve``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from attune_judge._bootstrap import MIN_B
from attune_judge.errors import UserError

__all__ = ["register"]


class _ServeByDefault(TyperGroup):
    """``annotate ITEMS ...`` runs ``annotate serve ITEMS ...``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


annotate_app = typer.Typer(
    cls=_ServeByDefault,
    help="Label items in a browser (blind, several annotators), draw samples, export labels. "
    "`annotate ITEMS --task T --rubric R --db LABELS.sqlite` runs `annotate serve`.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DbOption = Annotated[Path, typer.Option("--db", help="The labels database (SQLite).")]


@annotate_app.command("serve")
def serve(
    db: DbOption,
    items: Annotated[
        Path | None,
        typer.Argument(
            help="What `score` reads (AttuneBench data, JudgeItem JSONL) or a run "
            "directory; omit to reopen --db."
        ),
    ] = None,
    task: Annotated[str | None, typer.Option(help="ratings, pairwise or behaviours.")] = None,
    rubric: Annotated[
        str | None, typer.Option(help="Rubric name or YAML (default: a run directory's).")
    ] = None,
    annotator: Annotated[
        list[str] | None, typer.Option(help="An annotator's name (repeatable); gets a link.")
    ] = None,
    k: Annotated[int, typer.Option("--k", help="Labels wanted per item.")] = 1,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    judge: Annotated[
        Path | None, typer.Option(help="A judge's run directory for the agreement page.")
    ] = None,
    B: Annotated[
        int,
        typer.Option(
            "--bootstrap",
            "-B",
            "--B",
            min=MIN_B,
            help="Bootstrap replicates of the agreement page.",
        ),
    ] = 500,
) -> None:
    """Serve the labelling page; each annotator's link is printed (Ctrl-C stops)."""
    from attune_judge.annotate import prepare
    from attune_judge.annotate import serve as run_server

    store, tokens = prepare(db, items, task=task, rubric=rubric, k=k, annotators=annotator or [])
    run_server(store, tokens, host=host, port=port, judge=judge, B=B)


@annotate_app.command("sample")
def sample(
    items: Annotated[
        Path | None, typer.Argument(help="Items to draw from (as `score` reads).")
    ] = None,
    rubric: Annotated[str | None, typer.Option(help="Rubric name or YAML.")] = None,
    n: Annotated[int, typer.Option("--n", help="Conversations (by conversation) or items.")] = 20,
    by: Annotated[str, typer.Option(help="conversation, model or score.")] = "conversation",
    judge: Annotated[
        Path | None,
        typer.Option(
            help="Run directory: score strata (--by score); with --pilot, also size "
            "the judge's agreement with the annotators."
        ),
    ] = None,
    strata: Annotated[int, typer.Option(help="Score bins (--by score).")] = 4,
    allocation: Annotated[str, typer.Option(help="equal or proportional.")] = "equal",
    seed: Annotated[int, typer.Option(help="Seed of the draw.")] = 0,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="JudgeItem JSONL to write.")
    ] = None,
    pilot: Annotated[
        Path | None,
        typer.Option(
            help="A pilot's labels (export JSONL): print the "
            "conversations a --width interval needs."
        ),
    ] = None,
    width: Annotated[float, typer.Option(help="Target width of α's interval.")] = 0.2,
) -> None:
    """Draw the items to label (with inclusion probabilities), or size a study from a pilot."""
    if pilot is not None:
        _pilot(pilot, width, judge)
        return
    if items is None or out is None:
        raise UserError("annotate sample needs ITEMS and --out (or --pilot LABELS.jsonl)")
    from attune_judge.annotate import load_items, sample_items
    from attune_judge.data import write_jsonl

    found, _ = load_items(items, rubric)
    drawn = sample_items(
        found, n, by=by, judge=judge, strata=strata, allocation=allocation, seed=seed
    )
    write_jsonl(out, drawn)
    n_conv = len({i.conversation_id for i in drawn})
    print(f"{len(drawn)} of {len(found)} items ({n_conv} conversations) → {out}")


def _pilot(pilot: Path, width: float, judge: Path | None) -> None:
    from attune_judge.annotate import conversations_needed
    from attune_judge.calibration import MIN_CLUSTERS, few_clusters_warning
    from attune_judge.data import Preference, Rating
    from attune_judge.validate import read_labels, record_kind

    kind = record_kind(pilot)
    records: list[Preference] | list[Rating] = (
        read_labels(pilot, Preference) if kind == "preference" else read_labels(pilot, Rating)
    )
    print(
        f"| dimension | statistic | conversations | estimate | interval width | "
        f"conversations for width {width:g} |"
    )
    print("|---|---|---|---|---|---|")
    rows = conversations_needed(records, width, judge=judge)
    for row in rows:
        est = "—" if row["alpha"] is None else f"{row['alpha']:.3f}"
        w = "—" if row["width"] is None else f"{row['width']:.3f}"
        need = row["conversations_needed"] if row["conversations_needed"] is not None else "—"
        print(
            f"| {row['dimension']} | {row['statistic']} | {row['clusters']} | {est} | {w} "
            f"| {need} |"
        )
    few = few_clusters_warning(min((row["clusters"] for row in rows), default=0))
    if few:  # the pilot's own widths come from unvalidated intervals
        print(
            f"\nwarning: {few}; the pilot's own widths are as unreliable, and no study is "
            f"sized below {MIN_CLUSTERS} conversations"
        )


@annotate_app.command("export")
def export(
    db: DbOption,
    out: Annotated[Path, typer.Option("-o", "--out", help="File to write.")],
    fmt: Annotated[
        str, typer.Option("--format", help="jsonl (Rating/Preference) or labelstudio.")
    ] = "jsonl",
) -> None:
    """Write the labels as Rating / Preference JSONL (or Label Studio JSON)."""
    from attune_judge.annotate import export_labels

    counts = export_labels(db, out, fmt)
    print(
        f"{counts['records']} records from {counts['labels']} labels "
        f"({counts['flags']} flagged items not exported) → {out}"
    )


@annotate_app.command("import")
def import_(
    source: Annotated[Path, typer.Argument(help="A Label Studio JSON export.")],
    db: DbOption,
    as_name: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="Store every label of the file under this annotator name (a file of one "
            "annotator; needed when its name is already a web annotator's).",
        ),
    ] = None,
) -> None:
    """Store a Label Studio export's annotations in a labels database (all or nothing)."""
    from attune_judge.annotate import import_labelstudio

    counts = import_labelstudio(source, db, as_name=as_name)
    print(f"{counts['stored']} labels stored, {counts['present']} already there → {db}")


def register(app: typer.Typer) -> None:
    """Add the ``annotate`` command group to ``app``."""
    app.add_typer(annotate_app, name="annotate")
