"""Agreement between raters: two-rater metrics, multi-rater reliability, ICC, judge versus people,
panels, the calibrate report.

The public names are exported by :mod:`attune_judge.calibration`.
"""
