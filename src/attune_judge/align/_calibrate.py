"""``align --method calibrate`` (LLM-Rubric): judge every labelled item once in expected-score
mode, fit an ordinal head with rater offsets on the train + dev conversations (the penalty chosen
on dev), prove it on the held-out test conversations, and save it as a judge.

The distributions are read from the judge (the DSPy request cache makes a re-run free) or, for
a model already run, from its judgments (``judgments=``; e.g. a ``validate`` run's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from attune_judge.align._data import AlignData, LabelledItem
from attune_judge.align._head import OrdinalData, fit_ordinal, ordinal_nll
from attune_judge.align._proof import fit_line
from attune_judge.align._split import Split
from attune_judge.data import Judgment
from attune_judge.errors import UserError
from attune_judge.judges._calibrated import CalibrationHead, reply_features

__all__ = ["LAMBDAS", "FittedHeads", "fit_head", "fit_heads", "head_systems"]

LAMBDAS = (0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
"""Candidate L2 penalties of the weights, chosen by the dev split's log-likelihood."""
OFFSET_PENALTY = 1.0
"""L2 penalty of the rater offsets (a standard-normal prior on the logit scale)."""


def _level_index(value: float, levels: Sequence[int]) -> int:
    return int(np.argmin([abs(value - lv) for lv in levels]))


def _ordinal_data(
    z: np.ndarray,
    items: Sequence[LabelledItem],
    rows: Sequence[int],
    criterion: str,
    levels: Sequence[int],
    raters: Sequence[str],
) -> OrdinalData:
    """Ratings of ``criterion`` on the items ``rows`` (rows of ``z``)."""
    code = {r: k for k, r in enumerate(raters)}
    item, rater, y = [], [], []
    for row in rows:
        for r, vals in items[row].raters.items():
            if criterion in vals:
                item.append(row)
                rater.append(code.get(r, -1))
                y.append(_level_index(vals[criterion], levels))
    return OrdinalData(
        z=z,
        item=np.array(item, int),
        rater=np.array(rater, int),
        y=np.array(y, int),
        n_levels=len(levels),
        n_raters=len(raters),
    )


def fit_head(
    items: Sequence[LabelledItem],
    distributions: Sequence[dict[str, Any]],
    fit_rows: Sequence[int],
    dev_rows: Sequence[int],
    *,
    judge_levels: dict[str, list[int]],
    target_levels: dict[str, list[int]],
    reply: bool,
) -> CalibrationHead:
    """The head on ``fit_rows`` (train + dev) with the weight penalty that, fitted on the rows
    not in ``dev_rows``, gave the dev ratings the highest likelihood."""
    shell = CalibrationHead(
        judge_levels=judge_levels, reply_features=reply, center=[], scale=[], heads={}
    )
    raw = np.array(
        [shell.raw_features(d, li.item) for d, li in zip(distributions, items, strict=True)]
    )
    fit = np.asarray(fit_rows, int)
    center = raw[fit].mean(axis=0)
    scale = raw[fit].std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    z = (raw - center) / scale
    raters = sorted({r for k in fit for r in items[k].raters})
    train = [k for k in fit_rows if k not in set(dev_rows)]
    best, best_nll = LAMBDAS[len(LAMBDAS) // 2], math.inf
    if train and dev_rows:
        for lam in LAMBDAS:
            total = 0.0
            for t, lv in target_levels.items():
                d_tr = _ordinal_data(z, items, train, t, lv, raters)
                d_dev = _ordinal_data(z, items, dev_rows, t, lv, raters)
                if len(d_tr.y) == 0 or len(d_dev.y) == 0:
                    continue
                h = fit_ordinal(d_tr, lam_w=lam, lam_b=OFFSET_PENALTY, levels=lv, rater_ids=raters)
                params = _params(h, raters)
                total += ordinal_nll(params, d_dev)[0]
            if total < best_nll:
                best, best_nll = lam, total
    heads = {}
    for t, lv in target_levels.items():
        d = _ordinal_data(z, items, fit_rows, t, lv, raters)
        if len(d.y):
            heads[t] = fit_ordinal(d, lam_w=best, lam_b=OFFSET_PENALTY, levels=lv, rater_ids=raters)
    if not heads:
        raise UserError("calibrate: no rating on the train and dev items to fit the head on")
    return CalibrationHead(
        judge_levels=judge_levels,
        reply_features=reply,
        center=[float(v) for v in center],
        scale=[float(v) for v in scale],
        heads=heads,
        penalty={"weights": best, "offsets": OFFSET_PENALTY},
    )


def _params(head: Any, raters: Sequence[str]) -> np.ndarray:
    theta = np.asarray(head.cuts)
    a = np.concatenate([theta[:1], np.log(np.maximum(np.diff(theta), 1e-300))])
    b = [head.rater_offsets.get(r, 0.0) for r in raters]
    return np.concatenate([a, np.asarray(head.weights), np.asarray(b)])


class FittedHeads:
    """The heads of one calibration run: without and with reply features (the proof shows
    both; the artifact keeps the one asked for)."""

    def __init__(self, plain: CalibrationHead, reply: CalibrationHead, *, keep_reply: bool):
        self.plain = plain
        self.reply = reply
        self.keep_reply = keep_reply

    @property
    def saved(self) -> CalibrationHead:
        """The head the artifact keeps (with reply features when they were asked for)."""
        return self.reply if self.keep_reply else self.plain


def fit_heads(
    data: AlignData,
    rubric: Any,
    items: Sequence[LabelledItem],
    judgments: Sequence[Judgment | None],
    split: Split,
    *,
    reply: bool,
) -> FittedHeads:
    """Fit on the train + dev items whose judgment carries every criterion's distribution."""
    part = {iid: name for name, ids in split.items.items() for iid in ids}
    judge_levels = {c.id: list(rubric.scale_of(c.id).levels) for c in rubric.criteria}
    target_levels = {c: list(rubric.scale_of(c).levels) for c in data.criteria}
    dists = [_distributions(j, judge_levels) for j in judgments]
    ok = [k for k, d in enumerate(dists) if d is not None]
    fit_rows = [r for r, k in enumerate(ok) if part[items[k].item.item_id] in ("train", "dev")]
    dev_rows = [r for r, k in enumerate(ok) if part[items[k].item.item_id] == "dev"]
    if len(fit_rows) < 3:
        raise UserError(
            f"calibrate: only {len(fit_rows)} train/dev items have a score distribution for "
            "every criterion; the head needs more"
        )
    sub = [items[k] for k in ok]
    sub_d = [dists[k] for k in ok]
    kw = {"judge_levels": judge_levels, "target_levels": target_levels}
    plain = fit_head(sub, sub_d, fit_rows, dev_rows, reply=False, **kw)  # type: ignore[arg-type]
    with_reply = fit_head(sub, sub_d, fit_rows, dev_rows, reply=True, **kw)  # type: ignore[arg-type]
    return FittedHeads(plain, with_reply, keep_reply=reply)


def _distributions(j: Judgment | None, judge_levels: dict[str, list[int]]) -> dict | None:
    if j is None or j.status != "ok":
        return None
    d = j.details.get("distributions") or {}
    return d if all(c in d for c in judge_levels) else None


def head_systems(
    heads: FittedHeads,
    train: Sequence[LabelledItem],
    test: Sequence[LabelledItem],
    judgments: Sequence[Judgment | None],
    criteria: Sequence[str],
) -> tuple[dict[str, dict[str, list[float | None]]], dict[str, dict[str, list[dict | None]]]]:
    """Per test item: each system's value and each probabilistic system's distribution, per
    criterion (``None`` where the judgment failed)."""
    systems: dict[str, dict[str, list[float | None]]] = {}
    dists: dict[str, dict[str, list[dict | None]]] = {}
    variants = [("calibrated", heads.plain), ("calibrated+reply", heads.reply)]
    judge_levels = heads.plain.judge_levels
    raw_d = [_distributions(j, judge_levels) for j in judgments]
    systems["uncalibrated"] = {
        c: [
            float(j.scores[c]) if d is not None and j and c in j.scores else None
            for j, d in zip(judgments, raw_d, strict=True)
        ]
        for c in criteria
    }
    dists["uncalibrated"] = {
        c: [d[c]["probabilities"] if d else None for d in raw_d] for c in criteria
    }
    for name, head in variants:
        preds = [head.predict(d, li.item) if d else None for d, li in zip(raw_d, test, strict=True)]
        dists[name] = {c: [p[c] if p else None for p in preds] for c in criteria}
        systems[name] = {
            c: [sum(float(lv) * q for lv, q in p[c].items()) if p else None for p in preds]
            for c in criteria
        }
    for name, feature in (("length", "reply:length"), ("lexicon", "reply:lexicon")):
        coef = fit_line(train, criteria, [reply_features(li.item)[feature] for li in train])
        xs = [reply_features(li.item)[feature] for li in test]
        systems[name] = {
            c: [float(np.polyval(coef[c], x)) if c in coef else None for x in xs] for c in criteria
        }
    return systems, dists
