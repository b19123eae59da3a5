"""The layout version of ``summary.json`` (bottom-level: every writer of a run directory
stamps it; :mod:`attune_judge.runs` types the records)."""

SCHEMA_VERSION = 2
"""Version of the ``summary.json`` layout; raised when a key changes meaning or goes away
(2: the bootstrap count is ``B`` everywhere, ``bootstrap_replicates`` before)."""
