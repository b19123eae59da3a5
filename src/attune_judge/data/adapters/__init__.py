"""Adapters: convert public datasets with human labels to our records.

Each ``convert_<name>(src_dir)`` returns an :class:`AdapterResult` (ratings, preferences,
items and a report of counts, unmatched ids and value ranges); :func:`write_result` writes it.
"""

from attune_judge.data.adapters._duo import DUO_DIMENSIONS, convert_duo
from attune_judge.data.adapters._empathic import (
    EC_RATERS,
    EC_SOURCES,
    EcSource,
    convert_empathic_communication,
)
from attune_judge.data.adapters._esconv import ESCONV_STRATEGIES, convert_esconv
from attune_judge.data.adapters._ieval import (
    IEVAL_BOTS,
    IEVAL_STATEMENTS,
    convert_ieval,
    parse_ieval_chat_log,
)
from attune_judge.data.adapters._result import (
    AdapterReport,
    AdapterResult,
    messages_to_item,
    parse_number,
    parse_transcript,
    value_ranges,
    write_result,
)

__all__ = [
    "DUO_DIMENSIONS",
    "EC_RATERS",
    "EC_SOURCES",
    "ESCONV_STRATEGIES",
    "IEVAL_BOTS",
    "IEVAL_STATEMENTS",
    "AdapterReport",
    "AdapterResult",
    "EcSource",
    "convert_duo",
    "convert_empathic_communication",
    "convert_esconv",
    "convert_ieval",
    "messages_to_item",
    "parse_ieval_chat_log",
    "parse_number",
    "parse_transcript",
    "value_ranges",
    "write_result",
]
