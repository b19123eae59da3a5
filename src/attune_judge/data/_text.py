"""Reading input text: a file that is not UTF-8 is a user error naming the file and line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attune_judge.errors import UserError

__all__ = ["not_utf8_error", "read_utf8", "reading_utf8"]


def not_utf8_error(path: Path | str) -> UserError:
    """The error for ``path`` not being UTF-8: where the first bad byte is and what to do."""
    path = Path(path)
    where = ""
    try:
        raw = path.read_bytes()
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        where = f" (line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8)"
    except OSError:
        pass
    return UserError(f"{path}: not UTF-8 text{where}; save the file as UTF-8 and run again")


@contextmanager
def reading_utf8(path: Path | str) -> Iterator[None]:
    """Turn a ``UnicodeDecodeError`` raised while reading ``path`` into :func:`not_utf8_error`."""
    try:
        yield
    except UnicodeDecodeError:
        raise not_utf8_error(path) from None


def read_utf8(path: Path | str, *, encoding: str = "utf-8") -> str:
    """The text of ``path`` (``utf-8`` or ``utf-8-sig``); not UTF-8 → ``UserError``."""
    with reading_utf8(path):
        return Path(path).read_text(encoding=encoding)
