"""A scoring run's leaderboard: the one stored in ``summary.json``, or computed when absent.

:func:`~attune_judge.runner.summarize` stores each judge's leaderboard with rank sets; the
report and ``attune-judge rank RUN`` read it rather than bootstrapping the judgments again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from attune_judge.errors import UserError

if TYPE_CHECKING:
    from attune_judge.calibration import Leaderboard

__all__ = ["run_leaderboard"]


def _stored(
    run_dir: Path, judge_id: str | None, *, B: int, seed: int, level: float
) -> Leaderboard | None:
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    judges = summary.get("judges") if isinstance(summary, dict) else None
    if not isinstance(judges, dict) or not judges:
        return None
    if judge_id is None:
        if len(judges) > 1:
            return None  # the judgments path names the judges in its error
        judge_id = next(iter(judges))
    board = (judges.get(judge_id) or {}).get("leaderboard")
    if not isinstance(board, dict):
        return None
    if (board.get("B"), board.get("seed"), board.get("level")) != (B, seed, level):
        return None  # other settings than the run's: compute them
    from attune_judge.calibration import Leaderboard

    return Leaderboard.model_validate(board)


def run_leaderboard(
    run_dir: Path | str,
    judge_id: str | None = None,
    *,
    field: Literal["normalized", "overall"] = "normalized",
    B: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> Leaderboard:
    """The leaderboard of one judge of a scoring run directory.

    The one stored in ``summary.json`` when it was computed with these settings (normalised
    scores, ``B``, ``seed``, ``level``); otherwise computed from ``judgments.jsonl`` (ok
    judgments; the cluster is the conversation).

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
    from attune_judge.calibration import judgments_to_scores, leaderboard
    from attune_judge.data import Judgment, read_jsonl

    log = path / "judgments.jsonl"
    if not log.exists():
        raise UserError(f"{path}: a run directory must contain judgments.jsonl")
    js = read_jsonl(log, Judgment, tolerate_torn_tail=True)
    ids = sorted({j.judge_id for j in js})
    if judge_id is None and len(ids) > 1:
        raise UserError(f"{log}: several judges {ids[:5]}; choose one with --judge-id")
    if judge_id is not None and judge_id not in ids:
        raise UserError(f"{log}: no judge {judge_id!r} (--judge-id); judges: {ids[:10]}")
    try:
        models, clusters, scores = judgments_to_scores(
            [j for j in js if judge_id is None or j.judge_id == judge_id], field=field
        )
    except UserError as exc:
        raise UserError(f"{log}: {exc}") from None
    if not scores:
        raise UserError(f"{path}: no usable scores (status ok with a {field} score)")
    bounds = (0.0, 1.0) if field == "normalized" else None
    return leaderboard(models, clusters, scores, B=B, seed=seed, level=level, bounds=bounds)
