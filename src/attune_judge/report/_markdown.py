"""Render a :class:`Report` to Markdown (GitHub-flavoured tables; figures as relative links).

All text comes from blocks as plain strings and is escaped here: table cells lose their
newlines and pipes are backslash-escaped; ``<`` becomes ``&lt;`` so that a model name like
``<script>`` cannot open a tag when the Markdown is rendered to HTML elsewhere, and a paragraph
cannot start a quote or a heading.
"""

from __future__ import annotations

from attune_judge.report._blocks import (
    Block,
    Figure,
    KeyValues,
    Note,
    Paragraph,
    Report,
    Section,
    Table,
)

__all__ = ["md_escape", "render_markdown"]


def md_escape(text: str, *, cell: bool = False) -> str:
    """Escape text for Markdown; ``cell=True`` also makes it safe inside a table cell.

    >>> md_escape("a <b> | c", cell=True)
    'a &lt;b> \\\\| c'
    """
    out = str(text).replace("<", "&lt;")
    if cell:
        out = " ".join(out.split()).replace("|", "\\|")
    return out


def _table(t: Table) -> list[str]:
    rule = {"l": "---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(md_escape(c, cell=True) for c in t.columns) + " |",
        "|" + "|".join(rule.get(t.alignment(i), "---") for i in range(len(t.columns))) + "|",
    ]
    lines += ["| " + " | ".join(md_escape(c, cell=True) for c in row) + " |" for row in t.rows]
    if t.caption:
        lines += ["", "*" + md_escape(t.caption, cell=True) + "*"]
    return lines


def _block(block: Block, figure_dir: str) -> list[str]:
    if isinstance(block, Paragraph):
        # one line: a newline in untrusted text must not start a heading, list or quote
        text = md_escape(" ".join(block.text.split()))
        return ["\\" + text if text[:1] in ("#", ">", "-", "*", "+") else text]
    if isinstance(block, Note):
        prefix = "**Warning:** " if block.kind == "warning" else "**Note:** "
        return ["> " + prefix + md_escape(" ".join(block.text.split()))]
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, KeyValues):
        return [
            f"- **{md_escape(k, cell=True)}**: {md_escape(v, cell=True)}" for k, v in block.items
        ]
    if isinstance(block, Figure):
        alt = md_escape(block.alt, cell=True).replace("[", "(").replace("]", ")")
        lines = [f"![{alt}]({figure_dir}/{block.name}.png)"]
        if block.caption:
            lines += ["", "*" + md_escape(block.caption, cell=True) + "*"]
        return lines
    raise TypeError(f"unknown report block {type(block).__name__}")


def _section(section: Section, level: int, figure_dir: str) -> list[str]:
    lines = ["#" * level + " " + md_escape(" ".join(section.title.split())), ""]
    for block in section.blocks:
        lines += _block(block, figure_dir)
        lines.append("")
    for sub in section.subsections:
        lines += _section(sub, min(level + 1, 6), figure_dir)
    return lines


def render_markdown(report: Report, *, figure_dir: str = "figures") -> str:
    """The Markdown text of ``report``; figures link to ``{figure_dir}/{name}.png``."""
    lines = ["# " + md_escape(" ".join(report.title.split())), ""]
    if report.subtitle:
        lines += [md_escape(report.subtitle, cell=True), ""]
    for section in report.sections:
        lines += _section(section, 2, figure_dir)
    return "\n".join(lines).rstrip() + "\n"
