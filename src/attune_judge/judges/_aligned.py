"""The aligned judge as an artifact (read side; ``attune_judge.align`` writes it): a directory
holding the optimised DSPy program (DSPy's own ``save`` format), the rubric, the model, the
optimizer and its settings, the split and its seed, the held-out result and the score map.
``attune_judge.judges.load_aligned_judge`` turns it back into a judge whose ``judge_id`` includes
the artifact's hash, so caches and resumed runs never mix it with the unaligned judge.

Layout of ``DIR``::

    aligned-judge.json   manifest (AlignedJudgeManifest)
    program.json         the optimised program (dspy Module.save)
    rubric.json          the rubric (its content hash is checked on load)
    split.json           train / dev / test conversations and items, with the seed
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from attune_judge.data import JudgeItem, Judgment
from attune_judge.data._aligned import CALIBRATED_FORMAT, FORMAT, AlignedJudgeManifest, ScoreMap
from attune_judge.errors import UserError
from attune_judge.rubrics import Rubric

__all__ = [
    "ARTIFACT_FILE",
    "CALIBRATED_FORMAT",
    "FORMAT",
    "AlignedJudge",
    "AlignedJudgeManifest",
    "ScoreMap",
    "aligned_rubric",
    "artifact_hash",
    "fitted_items",
    "held_out_items",
    "is_aligned_judge",
    "read_manifest",
]

log = logging.getLogger(__name__)

ARTIFACT_FILE = "aligned-judge.json"


def artifact_hash(program_sha256: str, rubric_hash: str, options: dict[str, Any], smap: Any) -> str:
    """First 16 hex of sha256 over what changes the judge's behaviour."""
    blob = json.dumps(
        {
            "program": program_sha256,
            "rubric": rubric_hash,
            "options": options,
            "score_map": smap.model_dump(mode="json") if smap is not None else None,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def is_aligned_judge(ref: object) -> bool:
    """Whether ``ref`` is the path of an aligned-judge directory."""
    if not isinstance(ref, str | Path):
        return False
    try:
        return (Path(ref) / ARTIFACT_FILE).is_file()
    except (OSError, ValueError):
        return False


def held_out_items(path: Path | str, source: str) -> set[str] | None:
    """The test-split item ids of an aligned judge when it was aligned on ``source`` (a set
    name or label file), else ``None``: validating it on its own training items would flatter
    it."""
    manifest = read_manifest(path)
    if manifest.source != source:
        return None
    return _split_items(path, "test")


def fitted_items(path: Path | str) -> set[str]:
    """The item ids an aligned or calibrated judge was fitted on: its train and dev split
    (``split.json``; the optimizer's demonstrations and metric calls, or the head's fit and its
    penalty's choice). Checking the judge against people's labels of these items flatters it."""
    return _split_items(path, "train", "dev")


def _split_items(path: Path | str, *parts: str) -> set[str]:
    """The item ids of ``parts`` of the artifact's ``split.json`` (``UserError`` naming the file
    when it is missing or unreadable)."""
    file = Path(path) / "split.json"
    try:
        items = json.loads(file.read_text(encoding="utf-8"))["items"]
        return {str(i) for part in parts for i in items[part]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{file}: not a readable split of the judge's items ({exc})") from None


def read_manifest(path: Path | str) -> AlignedJudgeManifest:
    """The manifest of an aligned judge (``UserError`` naming the file when unreadable)."""
    from pydantic import ValidationError

    file = Path(path) / ARTIFACT_FILE
    try:
        return AlignedJudgeManifest.model_validate_json(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: not an aligned judge (no {ARTIFACT_FILE})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{file}: field {where}: {first['msg']}") from None


class AlignedJudge:
    """A rubric judge running the optimised program, with the score map applied.

    Attributes
    ----------
    base
        The underlying judge (its ``program`` replaced by the optimised one).
    manifest
        The artifact's manifest.
    """

    def __init__(self, base: Any, manifest: AlignedJudgeManifest, *, apply_score_map: bool):
        self.base = base
        self.manifest = manifest
        self.score_map = manifest.score_map if apply_score_map else None
        self.rubric = base.rubric
        self.lm = base.lm
        self.spec = base.spec.with_keys(
            aligned={
                "artifact_hash": manifest.artifact_hash,
                "score_map": self.score_map is not None,
            }
        )
        self.judge_id = self.spec.judge_id()
        base.spec = self.spec
        base.judge_id = self.judge_id

    def _mapped(self, judgment: Judgment) -> Judgment:
        if self.score_map is None or judgment.status != "ok" or not judgment.scores:
            return judgment
        raw = dict(judgment.scores)
        mapped = self.score_map.apply_all(raw)
        overall, normalized = self.rubric.aggregate(mapped)
        details = {**judgment.details, "raw_scores": raw, "score_map": "isotonic"}
        return judgment.model_copy(
            update={
                "scores": mapped,
                "overall": overall,
                "normalized": normalized,
                "details": details,
            }
        )

    def judge(self, item: JudgeItem) -> Judgment:
        """Judge one item with the optimised program (score map applied)."""
        return self._mapped(self.base.judge(item))

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Async :meth:`judge`."""
        return self._mapped(await self.base.ajudge(item))


def aligned_rubric(path: Path | str, manifest: AlignedJudgeManifest | None = None) -> Any:
    """The rubric saved in an aligned judge (its content hash checked against the manifest)."""
    root = Path(path)
    manifest = manifest or read_manifest(root)
    try:
        rubric = Rubric.model_validate_json((root / "rubric.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{root}: rubric.json is missing") from None
    if rubric.content_hash != manifest.rubric.get("hash"):
        raise UserError(f"{root}/rubric.json: content hash differs from the manifest's")
    return rubric
