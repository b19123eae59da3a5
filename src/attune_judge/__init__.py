"""attune-judge: LLM-judge scoring with calibration against people, grounded in AttuneBench."""

from typing import Any

from attune_judge._resources import shipped_dir
from attune_judge._version import __version__ as __version__

__all__ = ["load_run", "shipped_dir"]


def load_run(path: Any) -> Any:
    """A run directory as data: ``load_run(RUN).to_pandas()`` is its long table (see
    :func:`attune_judge.runner.load_run`)."""
    from attune_judge.runner import load_run as _load_run

    return _load_run(path)
