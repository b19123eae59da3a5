"""The shipped sets a judge is validated on: real people's ratings
(``calibration/<name>/ratings.jsonl``) and, for each set, which raters are the reference
people, which are shown beside the judge, which items belong to it and the matching rubric.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attune_judge._resources import shipped_dir
from attune_judge.data import JudgeItem, Rating, read_jsonl
from attune_judge.errors import UserError

__all__ = ["VALIDATION_SETS", "ValidationSet", "load_calibration_set"]


def load_calibration_set(name: str, root: Path | None = None) -> list[Rating]:
    """Ratings of a shipped calibration set (``calibration/<name>/ratings.jsonl``)."""
    base = Path(root) if root else shipped_dir("calibration")
    path = base / name / "ratings.jsonl"
    if not path.exists():
        known = sorted(p.name for p in base.iterdir() if (p / "ratings.jsonl").exists())
        raise UserError(f"{path}: no calibration set {name!r}; shipped sets: {known}")
    return read_jsonl(path, Rating)


@dataclass(frozen=True)
class ValidationSet:
    """A shipped set a judge can be validated on."""

    name: str
    calibration: str
    """Folder under ``calibration/`` (ratings) and ``data/`` (items)."""
    rubric: str
    """The rubric matching the human dimensions and scales."""
    humans: Callable[[Rating], bool]
    """Which ratings are the reference people."""
    recorded: Callable[[Rating], bool]
    """Which ratings are shown beside the new judge (recorded judges, other people)."""
    items: Callable[[JudgeItem], bool]
    """Which items belong to the set."""
    description: str


def _ec(source: str) -> ValidationSet:
    return ValidationSet(
        name=f"empathic-communication-{source}",
        calibration="empathic-communication",
        rubric=f"empathic-communication-{source}",
        humans=lambda r: r.rater_group == "experts" and r.metadata.get("source") == source,
        recorded=lambda r: (
            r.rater in ("gpt", "claude", "gemini", "crowd") and r.metadata.get("source") == source
        ),
        items=lambda i: i.metadata.get("source") == source,
        description=f"{source} (Kumar et al. 2025): 3 experts; GPT-4o, Claude 3.7 Sonnet, Gemini "
        "2.5 Pro and the crowd shown beside",
    )


VALIDATION_SETS: dict[str, ValidationSet] = {
    s.name: s
    for s in (
        _ec("empatheticdialogues"),
        _ec("epitome"),
        _ec("lend_an_ear"),
        ValidationSet(
            name="duo",
            calibration="duo",
            rubric="duo-dialogue",
            humans=lambda r: r.rater_group == "observers" and r.metadata.get("language") == "en",
            recorded=lambda r: r.rater == "participant" and r.metadata.get("language") == "en",
            items=lambda i: i.metadata.get("language") == "en",
            description="DUO English dialogues with outside raters: 3 observers; the "
            "participant's own rating shown beside",
        ),
        ValidationSet(
            name="esconv",
            calibration="esconv",
            rubric="esconv-survey",
            humans=lambda r: r.rater == "seeker" and r.dimension in ("empathy", "relevance"),
            recorded=lambda r: False,
            items=lambda i: i.metadata.get("scope") == "conversation",
            description="FailedESConv: the seeker's end-of-chat empathy and relevance (one "
            "person per conversation: no ceiling, no alt-test)",
        ),
    )
}
