"""Records, the AttuneBench file format, and adapters for public datasets.

The instrument's item inventory is the submodule :mod:`attune_judge.data.instrument`.
"""

from attune_judge.data import instrument
from attune_judge.data._attunebench import Conversation
from attune_judge.data._attunebench_convert import (
    attunebench_to_judge_items,
    attunebench_to_preferences,
    attunebench_to_ratings,
    behaviour_dimension,
    behaviour_item_order,
    turn_context,
)
from attune_judge.data._attunebench_io import (
    attunebench_problems,
    load_attunebench,
    write_attunebench_jsonl,
)
from attune_judge.data._attunebench_summary import AttuneBenchSummary, summarize_attunebench
from attune_judge.data._behaviour_polarity import BEHAVIOUR_POLARITY
from attune_judge.data._fs import os_reason, write_error
from attune_judge.data._jsonl import (
    JsonlAppender,
    effective_judgments,
    format_validation_error,
    iter_jsonl,
    read_jsonl,
    read_judgments,
    write_jsonl,
)
from attune_judge.data._judge_spec import JudgeSpec, LMSpec
from attune_judge.data._records import (
    ChatMessage,
    JudgeItem,
    Judgment,
    Preference,
    Rating,
    TokenUsage,
    make_id,
)
from attune_judge.data._text import not_utf8_error, read_utf8, reading_utf8

__all__ = [
    "BEHAVIOUR_POLARITY",
    "AttuneBenchSummary",
    "ChatMessage",
    "Conversation",
    "JsonlAppender",
    "JudgeItem",
    "JudgeSpec",
    "Judgment",
    "LMSpec",
    "Preference",
    "Rating",
    "TokenUsage",
    "attunebench_problems",
    "attunebench_to_judge_items",
    "attunebench_to_preferences",
    "attunebench_to_ratings",
    "behaviour_dimension",
    "behaviour_item_order",
    "effective_judgments",
    "format_validation_error",
    "instrument",
    "iter_jsonl",
    "load_attunebench",
    "make_id",
    "not_utf8_error",
    "os_reason",
    "read_jsonl",
    "read_judgments",
    "read_utf8",
    "reading_utf8",
    "summarize_attunebench",
    "turn_context",
    "write_attunebench_jsonl",
    "write_error",
    "write_jsonl",
]
