"""Where shipped files live: inside the installed package, or at the repository root.

A regular (non-editable) install carries the repository's ``rubrics/``, ``calibration/`` and
``data/samples/`` folders inside the package as ``attune_judge/_shipped/<name>`` (see
``[tool.hatch.build.targets.wheel.force-include]`` in pyproject.toml). An editable install or
a source checkout reads them from the repository root.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["package_file", "shipped_dir"]

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE_DIR.parents[1]


def shipped_dir(name: str) -> Path:
    """The folder of shipped files called ``name`` (``rubrics``, ``calibration``, ``data``).

    Raises ``FileNotFoundError`` naming both places looked at when neither exists.
    """
    inside = _PACKAGE_DIR / "_shipped" / name
    if inside.is_dir():
        return inside
    in_repo = _REPO_ROOT / name
    if in_repo.is_dir():
        return in_repo
    raise FileNotFoundError(f"shipped folder {name!r} not found in {inside} or {in_repo}")


def package_file(name: str) -> Path:
    """A data file that lives inside the package source itself (e.g. ``data/instrument.json``)."""
    return _PACKAGE_DIR / name
