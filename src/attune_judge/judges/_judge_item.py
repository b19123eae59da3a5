"""One item, judged: what ``attune-judge judge ITEM.json`` does, as library calls.

:func:`read_judge_item` reads one :class:`~attune_judge.data.JudgeItem` from a JSON file;
:func:`judge_item` builds the judge (a baseline, one model, or a jury of several) with
:func:`build_judge` and judges it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from attune_judge.data import JudgeItem, Judgment, format_validation_error, read_utf8
from attune_judge.errors import UserError
from attune_judge.judges._factory import BASELINES, JudgeOptions, build_judge
from attune_judge.judges._jury import Jury
from attune_judge.lm import LMSettings

__all__ = ["judge_item", "read_judge_item"]


def read_judge_item(path: Path) -> JudgeItem:
    """One ``JudgeItem`` from a JSON file; problems name the file and the field."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder; expected a JSON file holding one judge item")
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    try:
        data = json.loads(read_utf8(path))
    except json.JSONDecodeError as exc:
        hint = (
            " (one item per file: `judge` takes a .json holding one JudgeItem, not a JSONL)"
            if exc.msg == "Extra data"
            else ""
        )
        raise UserError(f"{path}: not valid JSON: {exc}{hint}") from None
    try:
        return JudgeItem.model_validate(data)
    except ValidationError as exc:
        problems = format_validation_error(exc, str(path))
        raise UserError(f"{path}: not a judge item", problems=problems) from None


def judge_item(
    item: JudgeItem,
    rubric: str | Path = "attunebench-reference",
    lms: Sequence[str] = ("local",),
    *,
    jury: Literal["mean", "median", "majority", "none"] = "mean",
    settings: LMSettings | None = None,
    options: JudgeOptions | None = None,
) -> Judgment | list[Judgment]:
    """Judge one item with a rubric (or a baseline: ``length``, ``lexical``, ``lexicon``).

    Parameters
    ----------
    lms
        Judge models; several are a jury combined by ``jury`` (``none``: one judgment each,
        returned as a list).
    settings
        Model settings (server, decoding, cache) every model shares; default
        :meth:`LMSettings.from_env`.
    options
        Judge options of :func:`build_judge` (ignored by the baselines).
    """
    if isinstance(rubric, str) and rubric in BASELINES:
        return build_judge(rubric).judge(item)
    models = list(lms) or ["local"]
    settings = settings or LMSettings.from_env()
    several = len(models) > 1
    judges = [
        build_judge(rubric, settings.member(m, jury=several), options or JudgeOptions())
        for m in models
    ]
    if len(judges) == 1:
        return judges[0].judge(item)
    if jury == "none":
        return [j.judge(item) for j in judges]
    return Jury(judges, method=jury).judge(item)
