"""Pairwise preferences: a judge's verdicts against people's choices, no-model baselines, position
and length bias.

The public names are exported by :mod:`attune_judge.calibration`.
"""
