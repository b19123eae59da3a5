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
) -> None:
    """Write report.md and a self-contained report.html (figures embedded) for a run."""
    from attune_judge.report import write_report

    # one door for every run kind: the kind's sections come from the report's registry
    md_path, html_path = write_report(run)
    print(md_path)
    print(html_path)


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to app."""
    app.command("report")(report)
