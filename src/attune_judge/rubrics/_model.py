"""The rubric record: a strict, hashed description of what a judge scores and how.

Rubrics are data (YAML files); this module validates them. We own the format, so unknown
fields are rejected, and every rubric carries a content hash that is recorded with every
judgment made with it.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["Aggregation", "Criterion", "Rubric", "RubricKind", "Scale"]

RubricKind = Literal["reference", "pairwise", "behaviour", "checklist"]
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scale(_Strict):
    """An integer scale from ``min`` to ``max`` (inclusive)."""

    min: int
    """Lowest allowed score."""
    max: int
    """Highest allowed score; must be greater than ``min``."""

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.min >= self.max:
            raise ValueError(f"scale min ({self.min}) must be less than max ({self.max})")
        return self

    @property
    def levels(self) -> list[int]:
        """Every allowed score, ascending."""
        return list(range(self.min, self.max + 1))


class Criterion(_Strict):
    """One thing the judge scores (a rating dimension, a behaviour item, a pairwise question)."""

    id: str
    """Identifier, also the judge's output field name (letters, digits, underscore)."""
    name: str
    """Short human-readable name."""
    description: str
    """What the criterion means (for pairwise rubrics: the question asked)."""
    scale: Scale | None = None
    """Score range; required for ``reference`` rubrics, 0..1 (no/yes) for ``behaviour``."""
    anchors: dict[int, str] = Field(default_factory=dict)
    """Description of what a score level means, per level (levels must lie in the scale)."""
    category: str | None = None
    """Optional grouping (behaviour category, emotional-intelligence branch, ...); in a
    ``checklist`` rubric, the dimension (score name) the question counts towards."""
    polarity: Literal["positive", "negative", "neutral"] | None = None
    """Behaviour items: whether ``yes`` counts for (``positive``) or against (``negative``) the
    reply, or not at all (``neutral``: answered and compared, left out of the score).
    ``None`` means ``positive``. Checklist questions: required, ``positive`` or ``negative``."""

    @field_validator("id")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not _IDENTIFIER.match(value):
            raise ValueError(
                f"criterion id {value!r} must start with a letter and contain only letters, "
                "digits and underscores"
            )
        return value

    @model_validator(mode="after")
    def _anchors_in_scale(self) -> Criterion:
        if self.anchors and self.scale is None:
            raise ValueError("anchors need a scale")
        if self.scale is not None:
            outside = sorted(k for k in self.anchors if not self.scale.min <= k <= self.scale.max)
            if outside:
                raise ValueError(
                    f"anchor levels {outside} lie outside the scale "
                    f"{self.scale.min}..{self.scale.max}"
                )
        return self


class Aggregation(_Strict):
    """How criterion scores combine into the overall score."""

    method: Literal["mean", "weighted"] = "mean"
    """``mean`` of all criteria, or ``weighted`` mean with ``weights``."""
    weights: dict[str, float] = Field(default_factory=dict)
    """Weight per criterion id (``weighted`` only; all criteria, positive weights)."""

    @model_validator(mode="after")
    def _weights_match_method(self) -> Aggregation:
        if self.method == "mean" and self.weights:
            raise ValueError("weights are only allowed with method 'weighted'")
        if self.method == "weighted":
            if not self.weights:
                raise ValueError("method 'weighted' needs weights")
            bad = sorted(k for k, w in self.weights.items() if not w > 0)
            if bad:
                raise ValueError(f"weights must be positive: {bad}")
        return self


class Rubric(_Strict):
    """A scoring rubric (see ``rubrics/*.yaml``)."""

    id: str
    """Stable identifier (``attunebench-reference``)."""
    version: str
    """Bumped whenever a change would invalidate earlier scores."""
    description: str
    """What the rubric measures."""
    kind: RubricKind
    """``reference`` (scores against a reference), ``pairwise`` (A/B), ``behaviour`` (yes/no)
    or ``checklist`` (yes/no questions with polarity, aggregated to ``scale``)."""
    instructions: str
    """Instructions to the judge (the task statement; never contains conversation text)."""
    criteria: list[Criterion] = Field(min_length=1)
    """The criteria, in output order."""
    aggregation: Aggregation = Field(default_factory=Aggregation)
    """How criterion scores combine into the overall score."""
    source: str | None = None
    """Where the rubric comes from (paper, instrument), if not our own."""
    scale: Scale | None = None
    """``checklist`` only: the scale each dimension's share of good answers is mapped to."""

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate criterion ids: {duplicates}")
        if self.kind == "reference":
            missing = [c.id for c in self.criteria if c.scale is None]
            if missing:
                raise ValueError(f"reference rubric criteria need a scale: {missing}")
        if self.kind not in ("behaviour", "checklist"):
            polar = [c.id for c in self.criteria if c.polarity is not None]
            if polar:
                raise ValueError(
                    f"polarity is for behaviour items only (and checklist questions): {polar}"
                )
        if self.kind == "behaviour":
            wrong = [
                c.id
                for c in self.criteria
                if c.scale is not None and c.scale != Scale(min=0, max=1)
            ]
            if wrong:
                raise ValueError(f"behaviour criteria are yes/no (scale 0..1): {wrong}")
        self._check_checklist()
        if self.aggregation.method == "weighted":
            weights = set(self.aggregation.weights)
            if weights != set(ids):
                raise ValueError(
                    f"aggregation weights must name every criterion exactly: "
                    f"missing {sorted(set(ids) - weights)}, unknown {sorted(weights - set(ids))}"
                )
        return self

    def _check_checklist(self) -> None:
        if self.kind != "checklist":
            if self.scale is not None:
                raise ValueError("a rubric-level scale is only for checklist rubrics")
            return
        if self.scale is None:
            raise ValueError("a checklist rubric needs a scale (what its dimensions map to)")
        missing = [c.id for c in self.criteria if c.polarity not in ("positive", "negative")]
        if missing:
            raise ValueError(f"checklist questions need a polarity (positive/negative): {missing}")
        scaled = [c.id for c in self.criteria if c.scale is not None or c.anchors]
        if scaled:
            raise ValueError(f"checklist questions are yes/no (no scale or anchors): {scaled}")

    @property
    def dimensions(self) -> list[str]:
        """``checklist``: the dimensions (criterion categories, ``overall`` when none), in
        order of first appearance; other kinds: the criterion ids."""
        if self.kind != "checklist":
            return [c.id for c in self.criteria]
        return list(dict.fromkeys(c.category or "overall" for c in self.criteria))

    def checklist_scores(self, p_yes: dict[str, float]) -> tuple[dict[str, float], float, float]:
        """Dimension scores, overall score and its [0, 1] normalisation of a checklist.

        Each question counts ``p_yes`` (positive polarity) or ``1 - p_yes`` (negative) as its
        share of a good answer; a dimension's share is the (weighted) mean over its questions,
        mapped to the rubric's scale as ``min + share * (max - min)``; the overall share is the
        (weighted) mean over all questions.

        Examples
        --------
        Scale 1..5; empathy: a positive question with P(yes) = 0.9, a negative one with
        P(yes) = 0.3: share (0.9 + 0.7) / 2 = 0.8, score 1 + 0.8 * 4 = 4.2.
        """
        if self.kind != "checklist" or self.scale is None:
            raise ValueError(f"rubric {self.id!r} is not a checklist")
        low, span = self.scale.min, self.scale.max - self.scale.min
        weighted = self.aggregation.method == "weighted"
        sums: dict[str, list[float]] = {}
        total = [0.0, 0.0]
        for c in self.criteria:
            if c.id not in p_yes:
                continue
            good = p_yes[c.id] if c.polarity == "positive" else 1.0 - p_yes[c.id]
            w = self.aggregation.weights[c.id] if weighted else 1.0
            acc = sums.setdefault(c.category or "overall", [0.0, 0.0])
            acc[0] += w * good
            acc[1] += w
            total[0] += w * good
            total[1] += w
        if not total[1]:
            raise ValueError("no checklist answers to aggregate")
        scores = {dim: low + span * (s / w) for dim, (s, w) in sums.items()}
        share = total[0] / total[1]
        return scores, low + span * share, share

    @property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of the whole rubric (sorted keys, no whitespace).

        The fields added later (``scale``, ``polarity``) are left out while unset, so adding
        them to the format kept the hashes of every earlier rubric.
        """
        data = self.model_dump(mode="json")
        if data.get("scale") is None:
            data.pop("scale", None)
        for criterion in data["criteria"]:
            if criterion.get("polarity") is None:
                criterion.pop("polarity", None)
        canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def criterion(self, criterion_id: str) -> Criterion:
        """The criterion with this id (``KeyError`` naming the known ids otherwise)."""
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(f"rubric {self.id!r} has no criterion {criterion_id!r}")

    def scale_of(self, criterion_id: str) -> Scale:
        """The criterion's scale (0..1 for behaviour items without an explicit scale)."""
        c = self.criterion(criterion_id)
        if c.scale is not None:
            return c.scale
        return Scale(min=0, max=1)

    def aggregate(self, scores: dict[str, float]) -> tuple[float, float]:
        """Overall score and its [0, 1] normalisation from per-criterion scores.

        The overall score is the (weighted) mean of the raw scores; the normalised score is
        the (weighted) mean of each score mapped to [0, 1] by its own scale, which equals
        ``(overall - min) / (max - min)`` when all criteria share one scale.

        Examples
        --------
        Scores 7, 4, 4, 1 on 1..7: mean 4, normalised (4 - 1) / 6 = 0.5.
        """
        weights = {
            c.id: (self.aggregation.weights[c.id] if self.aggregation.method == "weighted" else 1.0)
            for c in self.criteria
            if c.id in scores
        }
        if not weights:
            raise ValueError("no criterion scores to aggregate")
        total = sum(weights.values())
        overall = sum(weights[k] * scores[k] for k in weights) / total
        normalized = 0.0
        for k, w in weights.items():
            scale = self.scale_of(k)
            normalized += w * (scores[k] - scale.min) / (scale.max - scale.min)
        return overall, normalized / total

    def spec(self) -> dict[str, str]:
        """Identity recorded in judge specs: id, version and content hash."""
        return {"id": self.id, "version": self.version, "hash": self.content_hash}
