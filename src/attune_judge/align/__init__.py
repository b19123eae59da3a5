"""Align a judge to people: DSPy optimizers on a cluster split, a held-out proof, a score map.

``align_judge(AlignConfig(...))`` splits the human-labelled items by conversation into train /
dev / test (seeded; the test split is never shown to the optimizer), estimates the model calls,
judges the test items with the unaligned judge, optimises the judge's DSPy program on train/dev
(``labeled-fewshot``, ``bootstrap-fewshot``, ``mipro``, ``gepa``), judges the test items again,
fits a monotone score map (cross-fitted by conversation), and writes an artifact directory that
``build_judge`` / ``--judge PATH`` load as a judge (:func:`load_aligned_judge`).

``calibrate_judge`` (``align --method calibrate``, LLM-Rubric) instead fits an ordinal head with
rater offsets on the judge's score distributions (expected-score mode), with the same split and
a held-out proof; its artifact loads the same way, as a calibrated judge.
"""

from attune_judge.align._artifact import (
    fitted_items,
    held_out_items,
    is_aligned_judge,
    load_aligned_judge,
    read_manifest,
)
from attune_judge.align._calibrate_proof import calibration_proof
from attune_judge.align._calibrate_run import calibrate_judge
from attune_judge.align._data import load_align_data
from attune_judge.align._optimize import OptimizerSettings
from attune_judge.align._run import AlignConfig, align_judge
from attune_judge.align._split import cluster_split

__all__ = [
    "AlignConfig",
    "OptimizerSettings",
    "align_judge",
    "calibrate_judge",
    "calibration_proof",
    "cluster_split",
    "fitted_items",
    "held_out_items",
    "is_aligned_judge",
    "load_align_data",
    "load_aligned_judge",
    "read_manifest",
]
