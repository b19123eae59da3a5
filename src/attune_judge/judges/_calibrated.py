"""A calibrated judge (LLM-Rubric, Hashemi et al., ACL 2024): the criterion judge in expected-
score mode, whose per-criterion distributions an ordinal head turns into the distribution of a
person's rating on each criterion (read side; ``attune_judge.align`` fits and writes it).

The head, per target criterion ``t`` with levels ``l_0 < … < l_{K-1}``, is a proportional-odds
model on the standardised features ``z`` of an item (every criterion's expected level and level
probabilities, optionally the reply's log length and empathy-word count)::

    P(y ≤ l_k | z, rater r) = σ(θ_k − z·w − b_r),   θ_0 < θ_1 < … < θ_{K-2}

``b_r`` is rater ``r``'s offset (a strict person stays strict); a new rater, and the judge's
own score, use ``b = 0`` (the typical rater). The score is the expected level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from attune_judge.data import JudgeItem, Judgment
from attune_judge.errors import UserError
from attune_judge.judges._baselines import tokens
from attune_judge.judges._lexicon import lexicon_count

__all__ = [
    "HEAD_FILE",
    "CalibratedJudge",
    "CalibrationHead",
    "OrdinalHead",
    "calibrate_judgment",
    "calibrated_head",
    "ordinal_probabilities",
    "read_head",
    "reply_features",
]

HEAD_FILE = "head.json"
REPLY_FEATURES = ("reply:length", "reply:lexicon")


def ordinal_probabilities(cuts: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``(n, K)`` level probabilities of a proportional-odds model: cut points ``(K-1,)``,
    linear predictors ``(n,)``.

    >>> p = ordinal_probabilities(np.array([0.0]), np.array([0.0, 100.0]))
    >>> [[round(float(v), 3) for v in row] for row in p]
    [[0.5, 0.5], [0.0, 1.0]]
    """
    from scipy.special import expit

    F = expit(np.asarray(cuts, float)[None, :] - np.asarray(eta, float)[:, None])
    n = F.shape[0]
    F = np.hstack([np.zeros((n, 1)), F, np.ones((n, 1))])
    return np.clip(np.diff(F, axis=1), 0.0, 1.0)


class OrdinalHead(BaseModel):
    """One target criterion's proportional-odds head."""

    model_config = ConfigDict(extra="forbid")

    levels: list[int]
    """The criterion's scale levels, ascending."""
    cuts: list[float]
    """Cut points θ (increasing, one fewer than the levels)."""
    weights: list[float]
    """One weight per (standardised) feature."""
    rater_offsets: dict[str, float] = Field(default_factory=dict)
    """Rater id → offset b_r (penalised towards 0)."""
    n_ratings: int = 0
    """Ratings it was fitted on."""

    def probabilities(self, z: np.ndarray, rater: str | None = None) -> np.ndarray:
        """``(n, K)`` predicted level probabilities for standardised features ``z`` (n, p);
        ``rater`` ``None`` (or unknown): the rater-independent prediction."""
        z2 = np.atleast_2d(np.asarray(z, float))
        eta = z2 @ np.asarray(self.weights, float) + self.rater_offsets.get(rater or "", 0.0)
        return ordinal_probabilities(np.asarray(self.cuts, float), eta)

    def expected(self, z: np.ndarray, rater: str | None = None) -> np.ndarray:
        """The expected level per row of ``z``."""
        return self.probabilities(z, rater) @ np.asarray(self.levels, float)


def reply_features(item: JudgeItem) -> dict[str, float]:
    """The reply's log(1 + words) and its count of empathic words (the two baselines)."""
    return {
        "reply:length": math.log1p(len(tokens(item.candidate))),
        "reply:lexicon": float(lexicon_count(item.candidate)),
    }


class CalibrationHead(BaseModel):
    """Features (how an item's distributions become a vector) and one head per criterion."""

    model_config = ConfigDict(extra="forbid")

    judge_levels: dict[str, list[int]]
    """Judge criterion → its levels (its features: the expected level, and P(level) for all
    levels but the first)."""
    reply_features: bool = False
    """Whether the reply's length and lexicon count are features too."""
    center: list[float]
    """Feature means on the fitting items."""
    scale: list[float]
    """Feature standard deviations on the fitting items (1 where constant)."""
    heads: dict[str, OrdinalHead]
    """Target criterion → head."""
    penalty: dict[str, float] = Field(default_factory=dict)
    """``weights`` and ``offsets``: the L2 penalties the heads were fitted with."""

    def raw_features(
        self, distributions: Mapping[str, Any] | None, item: JudgeItem
    ) -> list[float] | None:
        """The unstandardised feature vector (``None`` when a criterion has no distribution)."""
        out: list[float] = []
        for c, levels in self.judge_levels.items():
            d = (distributions or {}).get(c)
            probs = d.get("probabilities") if isinstance(d, Mapping) else None
            if not isinstance(probs, Mapping):
                return None
            p = [float(probs.get(str(lv), 0.0)) for lv in levels]
            total = sum(p) or 1.0
            out.append(sum(lv * q for lv, q in zip(levels, p, strict=True)) / total)
            out += p[1:]
        if self.reply_features:
            rf = reply_features(item)
            out += [rf[k] for k in REPLY_FEATURES]
        return out

    def standardise(self, raw: np.ndarray) -> np.ndarray:
        """``(raw − center) / scale``."""
        return (np.asarray(raw, float) - np.asarray(self.center)) / np.asarray(self.scale)

    def predict(
        self, distributions: Mapping[str, Any] | None, item: JudgeItem, rater: str | None = None
    ) -> dict[str, dict[str, float]] | None:
        """Target criterion → level (text) → probability, or ``None`` without distributions."""
        raw = self.raw_features(distributions, item)
        if raw is None:
            return None
        z = self.standardise(np.array(raw))
        out = {}
        for t, head in self.heads.items():
            p = head.probabilities(z, rater)[0]
            out[t] = {str(lv): float(v) for lv, v in zip(head.levels, p, strict=True)}
        return out


def calibrate_judgment(
    head: CalibrationHead, rubric: Any, judgment: Judgment, item: JudgeItem
) -> Judgment:
    """``judgment`` with the head's scores (see :class:`CalibratedJudge`); failed ones as they
    are, an ok one without every distribution a ``parse_error``."""
    if judgment.status != "ok" or not judgment.scores:
        return judgment
    pred = head.predict(judgment.details.get("distributions"), item)
    if pred is None:
        return judgment.model_copy(
            update={
                "status": "parse_error",
                "error": "calibrated judge: a criterion has no score distribution",
                "scores": {},
                "overall": None,
                "normalized": None,
                "details": {**judgment.details, "reason": "no_distribution"},
            }
        )
    raw = dict(judgment.scores)
    scores = dict(raw)
    for t, probs in pred.items():
        scores[t] = sum(float(lv) * p for lv, p in probs.items())
    overall, normalized = rubric.aggregate(scores)
    details = {**judgment.details, "raw_scores": raw, "calibrated": pred}
    return judgment.model_copy(
        update={"scores": scores, "overall": overall, "normalized": normalized, "details": details}
    )


class CalibratedJudge:
    """The criterion judge (expected mode) with the calibration head applied to each judgment.

    ``scores`` are the head's expected levels (the rater-independent prediction); the raw
    expected scores stay in ``details["raw_scores"]``, the raw distributions in
    ``details["distributions"]`` and the head's distributions in ``details["calibrated"]``.
    A judgment without a distribution for every criterion is a ``parse_error``.
    """

    def __init__(self, base: Any, manifest: Any, head: CalibrationHead):
        self.base = base
        self.manifest = manifest
        self.head = head
        self.rubric = base.rubric
        self.lm = base.lm
        self.spec = base.spec.with_keys(calibrated={"artifact_hash": manifest.artifact_hash})
        self.judge_id = self.spec.judge_id()
        base.spec = self.spec
        base.judge_id = self.judge_id

    def calibrate(self, judgment: Judgment, item: JudgeItem) -> Judgment:
        """The judgment with calibrated scores (failed judgments unchanged)."""
        return calibrate_judgment(self.head, self.rubric, judgment, item)

    def judge(self, item: JudgeItem) -> Judgment:
        """Judge one item (expected mode), then apply the head."""
        return self.calibrate(self.base.judge(item), item)

    async def ajudge(self, item: JudgeItem) -> Judgment:
        """Async :meth:`judge`."""
        return self.calibrate(await self.base.ajudge(item), item)


def read_head(root: Path, manifest: Any) -> CalibrationHead:
    """``head.json`` of a calibrated judge, its sha256 checked against the manifest."""
    import hashlib

    from pydantic import ValidationError

    file = root / HEAD_FILE
    try:
        blob = file.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{root}: {HEAD_FILE} is missing") from None
    if hashlib.sha256(blob).hexdigest() != manifest.program_sha256:
        raise UserError(f"{file}: sha256 differs from the manifest's (edited?)")
    try:
        return CalibrationHead.model_validate_json(blob)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"{file}: field {where}: {first['msg']}") from None


def calibrated_head(
    root: Path, manifest: Any, asked: tuple[str | None, bool], model: str | None
) -> CalibrationHead:
    """The head of a calibrated judge, after refusing the score mode and reasoning ``asked``
    that it cannot honour and warning when it runs on another ``model`` than its fitted one;
    :func:`attune_judge.judges.load_aligned_judge` builds it."""
    import logging

    head = read_head(root, manifest)
    if asked[0] == "sampled" or asked[1]:
        raise UserError(
            f"{root}: a calibrated judge reads the model's score distributions (score mode "
            "expected, no reasoning); --score-mode sampled and --reasoning do not apply to it"
        )
    if model is not None and model != manifest.lm:
        logging.getLogger(__name__).warning(
            "calibrated judge %s was fitted on %s's distributions; running it on %s",
            root,
            manifest.lm,
            model,
        )
    return head
