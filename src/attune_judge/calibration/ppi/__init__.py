"""Prediction-powered inference: PPI and PPI++ means and differences from a judge and a labelled
subset.

The public names are exported by :mod:`attune_judge.calibration`.
"""
