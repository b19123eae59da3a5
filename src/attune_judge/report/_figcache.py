"""Reuse a run directory's figures when what they show has not changed.

A figure function (``forest_plot``, ``status_plot``, ... all wrapped by
:func:`~attune_judge.report._style.styled`) is a pure function of its arguments, the report's
code and the drawing libraries. :func:`write_report` opens a :class:`FigureCache` on the run
directory while it builds the report: each figure call's *key* (a SHA-256 of the function's
name, its arguments, the source of this package, the versions of matplotlib, Pillow and NumPy
and the user's ``matplotlibrc``) is looked up in ``.figure-keys.json``, the index the previous
report left (key → file under ``figures/`` and the file's SHA-256). A hit whose file still has
those bytes is returned as it is: nothing is drawn and matplotlib is not even imported, so a
rerun that changed nothing (a cached ``score`` rerun) writes the same bytes in milliseconds.
Anything else is drawn as before. The index is rewritten with every report and lists only that
report's figures.

What the key cannot see: fonts installed or removed on the machine and ``rcParams`` changed
in-process by a Python caller. Delete ``.figure-keys.json`` to draw every figure again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

__all__ = ["INDEX_NAME", "FigureCache", "cached_figure", "figure_cache"]

INDEX_NAME = ".figure-keys.json"
"""The index file, in the run directory (``figures/`` holds only the images)."""

_FORMAT = 1
_CURRENT: ContextVar[FigureCache | None] = ContextVar("attune_figure_cache", default=None)


class _UnkeyableError(Exception):
    """An argument this module cannot fingerprint exactly: the figure is drawn, not cached."""


def _feed(h: Any, obj: Any) -> None:
    """Feed an exact, type-tagged encoding of ``obj`` to the hash ``h``."""
    if obj is None or isinstance(obj, bool):
        h.update(b"N" if obj is None else (b"T" if obj else b"F"))
    elif isinstance(obj, int):
        h.update(b"i" + str(int(obj)).encode() + b";")
    elif isinstance(obj, float):
        value = float(obj)
        h.update(b"f" + (b"nan" if math.isnan(value) else struct.pack(">d", value)))
    elif isinstance(obj, str):
        data = obj.encode("utf-8", "surrogatepass")
        h.update(b"s" + str(len(data)).encode() + b":" + data)
    elif isinstance(obj, bytes):
        h.update(b"b" + str(len(obj)).encode() + b":" + obj)
    elif isinstance(obj, Mapping):
        h.update(b"{" + str(len(obj)).encode() + b":")
        for k, v in obj.items():  # order kept: it can change what is drawn
            _feed(h, k)
            _feed(h, v)
    elif isinstance(obj, list | tuple | range):
        h.update(b"[" + str(len(obj)).encode() + b":")
        for v in obj:
            _feed(h, v)
    elif type(obj).__module__ == "numpy" and hasattr(obj, "tobytes") and hasattr(obj, "dtype"):
        if obj.dtype.hasobject:
            _feed(h, obj.tolist())
        else:  # an array or a NumPy scalar: its type, shape and every byte
            h.update(b"a" + obj.dtype.str.encode() + repr(getattr(obj, "shape", ())).encode())
            h.update(obj.tobytes())
    else:
        raise _UnkeyableError(type(obj).__name__)


def _rc_files() -> list[Path]:
    """The ``matplotlibrc`` files matplotlib would read before its own defaults (as its
    documentation lists them: ``$MATPLOTLIBRC``, the working directory, ``$MPLCONFIGDIR``
    or the user's config directory)."""
    candidates = []
    env = os.environ.get("MATPLOTLIBRC")
    if env:
        p = Path(env)
        candidates.append(p / "matplotlibrc" if p.is_dir() else p)
    candidates.append(Path.cwd() / "matplotlibrc")
    config = os.environ.get("MPLCONFIGDIR")
    if config:
        candidates.append(Path(config) / "matplotlibrc")
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        candidates.append(Path(xdg) / "matplotlib" / "matplotlibrc")
    return [p for p in candidates if p.is_file()]


def _environment_stamp() -> bytes:
    """What else decides a figure's bytes: this package's source, the drawing libraries'
    versions and the user's ``matplotlibrc``."""
    from importlib import metadata

    h = hashlib.sha256(f"attune-figures/{_FORMAT}".encode())
    for dist in ("matplotlib", "pillow", "numpy"):
        try:
            h.update(f"{dist}={metadata.version(dist)};".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=?;".encode())
    for src in sorted(Path(__file__).parent.glob("*.py")):
        _feed(h, src.name)
        _feed(h, src.read_bytes())
    for rc in _rc_files():
        _feed(h, str(rc))
        _feed(h, rc.read_bytes())
    return h.digest()


class FigureCache:
    """The figures of the report last written into ``run_dir``, by key (see the module)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._stamp: bytes | None = None
        self._index: dict[str, dict[str, str]] = self._read_index()
        self._keys: dict[str, str] = {}  # sha256 of a PNG made or reused now → its key
        self.drawn = 0
        """Figures drawn (not reused) while this cache was open."""
        self.reused = 0
        """Figures reused from ``figures/``."""

    def _read_index(self) -> dict[str, dict[str, str]]:
        try:
            raw = json.loads((self.run_dir / INDEX_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT:
            return {}
        figures = raw.get("figures")
        if not isinstance(figures, dict):
            return {}
        return {
            k: v
            for k, v in figures.items()
            if isinstance(v, dict)
            and isinstance(v.get("file"), str)
            and isinstance(v.get("sha256"), str)
        }

    def key(self, fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        """The key of the call ``fn(*args, **kwargs)``; raises :class:`_UnkeyableError`."""
        if self._stamp is None:
            self._stamp = _environment_stamp()
        h = hashlib.sha256(self._stamp)
        _feed(h, f"{fn.__module__}.{fn.__qualname__}")
        _feed(h, list(args))
        _feed(h, dict(sorted(kwargs.items())))
        return h.hexdigest()

    def get(self, key: str) -> bytes | None:
        """The PNG the previous report drew for ``key``, if its file still holds it."""
        entry = self._index.get(key)
        if entry is None or "/" in entry["file"] or "\\" in entry["file"]:
            return None
        try:
            png = (self.run_dir / "figures" / entry["file"]).read_bytes()
        except OSError:
            return None
        digest = hashlib.sha256(png).hexdigest()
        if digest != entry["sha256"]:
            return None  # changed or replaced since: draw it again
        self._keys[digest] = key
        self.reused += 1
        return png

    def put(self, key: str, png: bytes) -> None:
        """Remember that ``png`` was drawn for ``key``."""
        self._keys[hashlib.sha256(png).hexdigest()] = key
        self.drawn += 1

    def save(self, written: Mapping[str, bytes]) -> None:
        """Write the index of the figures just written (file name → PNG bytes)."""
        figures: dict[str, dict[str, str]] = {}
        for name, png in written.items():
            digest = hashlib.sha256(png).hexdigest()
            key = self._keys.get(digest)
            if key is not None and key not in figures:
                figures[key] = {"file": name, "sha256": digest}
        path = self.run_dir / INDEX_NAME
        if not figures:
            path.unlink(missing_ok=True)
            return
        text = json.dumps({"format": _FORMAT, "figures": figures}, indent=1, sort_keys=True)
        with contextlib.suppress(OSError):  # an index that cannot be written costs a redraw
            if not path.is_file() or path.read_text(encoding="utf-8") != text + "\n":
                tmp = path.with_name(path.name + ".tmp")
                tmp.write_text(text + "\n", encoding="utf-8")
                tmp.replace(path)


@contextlib.contextmanager
def figure_cache(run_dir: Path) -> Iterator[FigureCache]:
    """Figures drawn inside this block are looked up in, and recorded for, ``run_dir``."""
    cache = FigureCache(run_dir)
    token = _CURRENT.set(cache)
    try:
        yield cache
    finally:
        _CURRENT.reset(token)


def cached_figure(
    fn: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], draw: Callable[[], Any]
) -> Any:
    """``draw()``, or the PNG the open :func:`figure_cache` holds for ``fn(*args, **kwargs)``."""
    cache = _CURRENT.get()
    if cache is None:
        return draw()
    try:
        key = cache.key(fn, args, kwargs)
    except _UnkeyableError:
        return draw()
    png = cache.get(key)
    if png is not None:
        return png
    png = draw()
    if isinstance(png, bytes):
        cache.put(key, png)
    return png
