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
    import json

    from attune_judge.report import write_bench_report, write_report

    summary_path = run / "summary.json"
    kind = None
    if summary_path.is_file():
        try:
            kind = json.loads(summary_path.read_text(encoding="utf-8")).get("kind")
        except (json.JSONDecodeError, AttributeError):
            kind = None  # write_report reports an unreadable summary with its own message
    # a bench run gets the bench-only sections (all metrics, discriminability, Kendall's W)
    # exactly as `attune-judge bench` wrote them
    writer = write_bench_report if kind == "bench" else write_report
    md_path, html_path = writer(run)
    print(md_path)
    print(html_path)


def register(app: typer.Typer) -> None:
    """Add the ``report`` command to app."""
    app.command("report")(report)
