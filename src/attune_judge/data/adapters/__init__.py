"""Adapters: convert public datasets with human labels to our records.

Each ``convert_<name>(src_dir)`` returns an :class:`AdapterResult` (ratings, preferences,
items and a report of counts, unmatched ids and value ranges); :func:`write_result` writes it.
"""

from attune_judge.data.adapters._duo import convert_duo
from attune_judge.data.adapters._empathic import EC_SOURCES, convert_empathic_communication
from attune_judge.data.adapters._esconv import ESCONV_STRATEGIES, convert_esconv
from attune_judge.data.adapters._ieval import convert_ieval, parse_ieval_chat_log
from attune_judge.data.adapters._result import AdapterResult, parse_transcript, value_ranges

__all__ = [
    "EC_SOURCES",
    "ESCONV_STRATEGIES",
    "AdapterResult",
    "convert_duo",
    "convert_empathic_communication",
    "convert_esconv",
    "convert_ieval",
    "parse_ieval_chat_log",
    "parse_transcript",
    "value_ranges",
]
