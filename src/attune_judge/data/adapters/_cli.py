"""``attune-judge data convert``: the command is registered on the ``data`` group by the CLI."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from attune_judge.errors import UserError

__all__ = ["AdapterName", "convert", "register_convert"]


class AdapterName(StrEnum):
    """The public datasets an adapter exists for."""

    empathic_communication = "empathic-communication"
    duo = "duo"
    ieval = "ieval"
    esconv = "esconv"


def convert(name: str, src: Path, out_dir: Path, *, item_level: str = "both") -> dict[str, object]:
    """Run one adapter and write its records; returns the report as a dict.

    ``item_level`` (``message``, ``conversation`` or ``both``) applies to ESConv only.
    """
    from attune_judge.data.adapters import (
        convert_duo,
        convert_empathic_communication,
        convert_esconv,
        convert_ieval,
    )
    from attune_judge.data.adapters._result import write_result

    adapters = {
        "empathic-communication": convert_empathic_communication,
        "duo": convert_duo,
        "ieval": convert_ieval,
        "esconv": convert_esconv,
    }
    if name == "esconv":
        if item_level not in ("message", "conversation", "both"):
            raise UserError(f"--item-level: {item_level!r} is not message, conversation or both")
        result = convert_esconv(src, item_level=item_level)  # type: ignore[arg-type]
    else:
        result = adapters[name](src)
    write_result(result, out_dir)
    return result.report.model_dump() if result.report else {}


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
