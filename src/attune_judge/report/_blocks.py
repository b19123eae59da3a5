"""The report's document model: a report is a list of sections, a section a list of blocks.

Blocks hold plain, already-formatted data (text, table cells, PNG bytes), never HTML or Markdown
markup, so one section renders to both formats and every string can be escaped in one place (the
renderers). Section builders (``_sections.py``) turn result data into these blocks; commands can
also compose their own sections from them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "Block",
    "Figure",
    "KeyValues",
    "Note",
    "Paragraph",
    "Report",
    "Section",
    "Table",
    "slugify",
]


def slugify(text: str) -> str:
    """A lowercase ``a-z0-9-`` slug of ``text`` (for anchors and figure file names)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug or "x"


@dataclass(frozen=True)
class Paragraph:
    """Plain text (escaped by the renderers; no markup is interpreted)."""

    text: str
    """The text."""


@dataclass(frozen=True)
class Note:
    """A highlighted remark: a warning, a caveat, a method note."""

    text: str
    """The text."""
    kind: str = "info"
    """``info`` or ``warning`` (a warning is drawn with a coloured border in HTML)."""


@dataclass(frozen=True)
class Table:
    """A table of already-formatted cells.

    ``align`` holds one of ``l``/``r``/``c`` per column (numbers are right-aligned).
    """

    columns: Sequence[str]
    """Column headers."""
    rows: Sequence[Sequence[str]]
    """Rows of cell text, each as long as ``columns``."""
    align: str = ""
    """Alignment per column; missing positions default to ``l``."""
    caption: str | None = None
    """A sentence under the table."""

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"table row {i} has {len(row)} cells, expected {len(self.columns)}"
                )

    def alignment(self, col: int) -> str:
        """Alignment of column ``col`` (``l``, ``r`` or ``c``)."""
        return self.align[col] if col < len(self.align) else "l"


@dataclass(frozen=True)
class KeyValues:
    """A two-column list of facts (the manifest, run settings)."""

    items: Sequence[tuple[str, str]]
    """(name, value) pairs, in display order."""


@dataclass(frozen=True)
class Figure:
    """A rendered figure: PNG bytes plus the words that make it readable without the image."""

    name: str
    """File stem under ``figures/`` (slug; unique within a report)."""
    png: bytes
    """The PNG image."""
    alt: str
    """Alternative text: what the figure shows, in one sentence."""
    caption: str | None = None
    """How to read it (shown under the image)."""


Block = Paragraph | Note | Table | KeyValues | Figure


@dataclass
class Section:
    """One titled part of a report; ``subsections`` nest one level deeper."""

    title: str
    """Heading text."""
    blocks: list[Block] = field(default_factory=list)
    """Content, in order."""
    subsections: list[Section] = field(default_factory=list)
    """Nested sections (rendered after ``blocks``)."""
    anchor: str | None = None
    """HTML id; defaults to a slug of the title (made unique by the renderer)."""

    def figures(self) -> list[Figure]:
        """Every figure of this section and its subsections, in document order."""
        out = [b for b in self.blocks if isinstance(b, Figure)]
        for sub in self.subsections:
            out.extend(sub.figures())
        return out


@dataclass
class Report:
    """A whole report: title, a few lines of context, sections."""

    title: str
    """Document title (the H1)."""
    sections: list[Section] = field(default_factory=list)
    """Top-level sections (H2), in order."""
    subtitle: str | None = None
    """One line under the title (what ran, when)."""

    def figures(self) -> list[Figure]:
        """Every figure in document order."""
        out: list[Figure] = []
        for s in self.sections:
            out.extend(s.figures())
        return out
