"""``attune-judge schema KIND``: print the JSON Schema of a run directory record."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["register"]


def schema(
    kind: Annotated[
        str,
        typer.Argument(
            help="manifest, or a summary kind: score, calibration, validate, sensitivity, "
            "bench, demo, ppi."
        ),
    ],
) -> None:
    """Print the JSON Schema of manifest.json or of a run kind's summary.json."""
    import json

    from attune_judge.runs import json_schema

    print(json.dumps(json_schema(kind), indent=2))


def register(app: typer.Typer) -> None:
    """Add the ``schema`` command to app."""
    app.command("schema")(schema)
