"""Adapters: convert public datasets with human labels to our records.

Each ``convert_<name>(src_dir)`` returns an :class:`AdapterResult` (ratings, preferences,
items and a report of counts, unmatched ids and value ranges); :func:`write_result` writes it.
"""

from pathlib import Path

from attune_judge.data.adapters._duo import convert_duo
from attune_judge.data.adapters._empathic import convert_empathic_communication
from attune_judge.data.adapters._esconv import convert_esconv
from attune_judge.data.adapters._ieval import convert_ieval
from attune_judge.data.adapters._inspect import (
    INSPECT_EXTRA,
    inspect_judge_items,
    inspect_judgments,
    inspect_log_api,
    is_inspect_log,
    scorer_judge_id,
)
from attune_judge.data.adapters._result import AdapterResult, write_result
from attune_judge.errors import UserError

__all__ = [
    "INSPECT_EXTRA",
    "AdapterResult",
    "convert",
    "convert_duo",
    "convert_empathic_communication",
    "convert_esconv",
    "convert_ieval",
    "inspect_judge_items",
    "inspect_judgments",
    "inspect_log_api",
    "is_inspect_log",
    "scorer_judge_id",
]


def convert(name: str, src: Path, out_dir: Path, *, item_level: str = "both") -> dict[str, object]:
    """Run one adapter and write its records; returns the report as a dict.

    ``item_level`` (``message``, ``conversation`` or ``both``) applies to ESConv only.
    """
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
