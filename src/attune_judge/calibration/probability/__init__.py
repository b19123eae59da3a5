"""Probabilistic judges: Brier score, expected calibration error, reliability diagrams.

The public names are exported by :mod:`attune_judge.calibration`.
"""
