"""``attune-judge report RUN``: write report.md, report.html and figures/ for a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def report(
    run: Annotated[
        Path, typer.Argument(help="Run directory (output of score, calibrate, bench, sensitivity).")
    ],
    items: Annotated[
        bool,
        typer.Option(
            "--items",
            help="Also write items.html: every judgment (conversation, replies, the judge's "
            "answer, people's labels) and the largest disagreements, as `view` shows them, in "
            "one static file (up to 2,000 judgments per run in full).",
        ),
    ] = False,
    human: Annotated[
        Path | None,
        typer.Option(help="People's labels for --items (Rating or Preference JSONL)."),
    ] = None,
) -> None:
    """Write report.md and a self-contained report.html (figures embedded) for a run."""
    from attune_judge.report import write_report

    if items:
        from attune_judge.annotate import write_items_html

        # the items file does not need a summary: a run still going, or killed, has judgments
        print(write_items_html(run, human=human))
        if not (run / "summary.json").exists():
            return

    # one door for every run kind: the kind's sections come from the report's registry
    md_path, html_path = write_report(run)
    print(md_path)
    print(html_path)


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to app."""
    app.command("report")(report)
