"""DSPy judge programs, baseline judges and juries."""

from attune_judge.judges._protocol import Judge

__all__ = ["Judge"]
