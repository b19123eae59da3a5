"""The shipped calibration sets (``calibration/<name>/ratings.jsonl``): real people's ratings.

Read by the demo and by ``validate`` (both sit above this module, so neither imports the
other for it).
"""

from __future__ import annotations

from pathlib import Path

from attune_judge._resources import shipped_dir
from attune_judge.data import Rating, read_jsonl
from attune_judge.errors import UserError

__all__ = ["load_calibration_set"]


def load_calibration_set(name: str, root: Path | None = None) -> list[Rating]:
    """Ratings of a shipped calibration set (``calibration/<name>/ratings.jsonl``)."""
    base = Path(root) if root else shipped_dir("calibration")
    path = base / name / "ratings.jsonl"
    if not path.exists():
        known = sorted(p.name for p in base.iterdir() if (p / "ratings.jsonl").exists())
        raise UserError(f"{path}: no calibration set {name!r}; shipped sets: {known}")
    return read_jsonl(path, Rating)
