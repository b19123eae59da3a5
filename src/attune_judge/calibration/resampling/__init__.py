"""Resampling primitives: the paired cluster bootstrap, its intervals, bounded means, ratio
estimators, max-t.

The public names are exported by :mod:`attune_judge.calibration`.
"""
