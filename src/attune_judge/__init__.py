"""attune-judge: LLM-judge scoring with calibration against people, grounded in AttuneBench."""

__version__ = "0.1.0"

__all__ = ["__version__"]
