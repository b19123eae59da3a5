"""Markdown renderings of the statistics (strings only).

The public names are exported by :mod:`attune_judge.calibration`.
"""
