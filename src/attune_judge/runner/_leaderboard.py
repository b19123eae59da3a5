"""A scoring run's leaderboard: the one stored in ``summary.json``, or computed again.

:func:`~attune_judge.runner.summarize` stores each judge's leaderboard with rank sets; the
report and ``attune-judge rank RUN`` read it. Other settings (``B``, seed, level, the
``overall`` score) recompute it with the runner's own :func:`judge_leaderboard` on the run's
effective judgments (the last judgment of each item), exactly as the runner did.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from attune_judge._bootstrap import DEFAULT_B, DEFAULT_LEVEL
from attune_judge.data import read_judgments
from attune_judge.errors import UserError
from attune_judge.runner._summary import judge_leaderboard
from attune_judge.runs import JudgedSummary, read_summary

if TYPE_CHECKING:
    from attune_judge.calibration import Leaderboard
    from attune_judge.data import Judgment

__all__ = ["run_leaderboard"]


def judgments_of(
    judgments: Sequence[Judgment], judge_id: str | None, where: object
) -> list[Judgment]:
    """The judgments of ``judge_id`` (of the only judge when ``None``); a ``UserError`` naming
    ``where`` for several judges and no ``judge_id``, or a judge that is not there."""
    ids = sorted({j.judge_id for j in judgments})
    if judge_id is None and len(ids) > 1:
        raise UserError(f"{where}: several judges {ids[:5]}; choose one with --judge-id")
    if judge_id is not None and judge_id not in ids:
        raise UserError(f"{where}: no judge {judge_id!r} (--judge-id); judges: {ids[:10]}")
    return [j for j in judgments if judge_id is None or j.judge_id == judge_id]


def _stored(
    run_dir: Path, judge_id: str | None, *, B: int, seed: int, level: float
) -> Leaderboard | None:
    summary = read_summary(run_dir)
    if not isinstance(summary, JudgedSummary) or not summary.judges:
        return None
    if judge_id is None:
        if len(summary.judges) > 1:
            return None  # the judgments path names the judges in its error
        judge_id = next(iter(summary.judges))
    block = summary.judges.get(judge_id)
    board = None if block is None else block.leaderboard
    if board is None or (board.B, board.seed, board.level) != (B, seed, level):
        return None  # other settings than the run's: compute them
    return board


def run_leaderboard(
    run_dir: Path | str,
    judge_id: str | None = None,
    *,
    field: Literal["normalized", "overall"] = "normalized",
    B: int = DEFAULT_B,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    scale: tuple[float, float] | None = None,
) -> Leaderboard:
    """The leaderboard of one judge of a scoring run directory.

    The one stored in ``summary.json`` when it was computed with these settings (normalised
    scores, ``B``, ``seed``, ``level``); otherwise :func:`judge_leaderboard` on the last
    judgment of each item in ``judgments.jsonl`` (its intervals on ``scale``, else on the
    scale the judgments record).

    Raises
    ------
    UserError
        No ``judgments.jsonl``, several judges and no ``judge_id``, an unknown judge, or no
        usable score.
    """
    path = Path(run_dir)
    if field == "normalized":
        stored = _stored(path, judge_id, B=B, seed=seed, level=level)
        if stored is not None:
            return stored

    log = path / "judgments.jsonl"
    if not log.exists():
        raise UserError(f"{path}: a run directory must contain judgments.jsonl")
    mine = [j for j in judgments_of(read_judgments(log), judge_id, log) if j.status == "ok"]
    try:
        board = judge_leaderboard(mine, B=B, seed=seed, level=level, field=field, scale=scale)
    except UserError as exc:  # a score that is not finite: named with its record
        raise UserError(f"{log}: {exc}") from None
    if board is None:
        raise UserError(
            f"{path}: no leaderboard: it needs ok judgments with a {field} score of two or "
            "more models in two or more conversations"
        )
    return board
