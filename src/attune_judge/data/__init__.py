"""Records, the AttuneBench file format, and adapters for public datasets."""

from attune_judge.data._jsonl import (
    JsonlAppender,
    format_validation_error,
    iter_jsonl,
    read_jsonl,
    write_jsonl,
)
from attune_judge.data._records import (
    ChatMessage,
    JudgeItem,
    Judgment,
    JudgmentStatus,
    Preference,
    Rating,
    TokenUsage,
    make_id,
)

__all__ = [
    "ChatMessage",
    "JsonlAppender",
    "JudgeItem",
    "Judgment",
    "JudgmentStatus",
    "Preference",
    "Rating",
    "TokenUsage",
    "format_validation_error",
    "iter_jsonl",
    "make_id",
    "read_jsonl",
    "write_jsonl",
]
