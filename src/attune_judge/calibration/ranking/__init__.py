"""Rankings: leaderboards, confidence sets for ranks, Bradley–Terry, agreement between rankings.

The public names are exported by :mod:`attune_judge.calibration`.
"""
