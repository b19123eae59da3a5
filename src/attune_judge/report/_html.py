"""Render a :class:`Report` to one self-contained HTML file.

No external resource of any kind: the CSS is inline, figures are ``data:image/png;base64`` URIs,
there is no script. Every piece of text is passed through :func:`html.escape` here (model names,
judge labels and conversation text are untrusted input).
"""

from __future__ import annotations

import base64
import html

from attune_judge.report._blocks import (
    Block,
    Figure,
    KeyValues,
    Note,
    Paragraph,
    Report,
    Section,
    Table,
    slugify,
)

__all__ = ["render_html"]

_CSS = """
:root { --ink: #1a1a1a; --muted: #5a5a5a; --rule: #d8d8d8; --accent: #0072B2;
        --warn: #D55E00; --band: #f5f7fa; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
       sans-serif; color: var(--ink); margin: 0; background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 64px; }
main p, main ul, main ol, .note, figcaption, .caption { max-width: 980px; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.1em; }
h2 { font-size: 1.3em; margin-top: 2em; padding-bottom: 0.2em;
     border-bottom: 2px solid var(--rule); }
h3 { font-size: 1.1em; margin-top: 1.5em; }
h4 { font-size: 1em; margin-top: 1.2em; }
h5, h6 { font-size: 0.95em; margin-top: 1em; color: var(--muted); }
.subtitle { color: var(--muted); margin: 0 0 1em; }
nav.toc { background: var(--band); border: 1px solid var(--rule); border-radius: 6px;
          padding: 10px 18px; margin: 16px 0 8px; }
nav.toc ol { margin: 4px 0; padding-left: 20px; }
nav.toc a { color: var(--accent); text-decoration: none; }
table { border-collapse: collapse; margin: 10px 0 6px; font-size: 0.92em;
        font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--rule); padding: 4px 10px; vertical-align: top; }
th { background: var(--band); text-align: left; border-bottom: 2px solid #bbb; }
td.r, th.r { text-align: right; }
td.r { white-space: nowrap; }
td.c, th.c { text-align: center; }
tbody tr:nth-child(even) { background: #fbfbfb; }
.caption { color: var(--muted); font-size: 0.88em; margin: 2px 0 12px; }
.table-wrap { overflow-x: auto; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 8px 0;
        font-size: 0.92em; }
dl.kv dt { font-weight: 600; color: var(--muted); }
dl.kv dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, SFMono-Regular,
           Menlo, Consolas, monospace; font-size: 0.95em; }
figure { margin: 14px 0 18px; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: var(--muted); font-size: 0.88em; margin-top: 4px; }
.note { border-left: 4px solid var(--accent); background: var(--band); padding: 6px 12px;
        margin: 10px 0; }
.note.warning { border-left-color: var(--warn); background: #fff4ec; }
footer { color: var(--muted); font-size: 0.8em; margin-top: 48px; }
@media print {
  nav.toc { display: none; }
  figure, table, .note { break-inside: avoid; }
  h2, h3, h4 { break-after: avoid; }
  main { max-width: none; padding: 0; }
}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


class _Anchors:
    """Unique ``id`` attributes for headings."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def make(self, section: Section) -> str:
        base = slugify(section.anchor or section.title)
        anchor, i = base, 2
        while anchor in self.seen:
            anchor, i = f"{base}-{i}", i + 1
        self.seen.add(anchor)
        return anchor


def _table(t: Table) -> str:
    cls = {"r": ' class="r"', "c": ' class="c"'}
    head = "".join(
        f'<th{cls.get(t.alignment(i), "")} scope="col">{_e(c)}</th>'
        for i, c in enumerate(t.columns)
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{cls.get(t.alignment(i), '')}>{_e(c)}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in t.rows
    )
    out = (
        f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )
    if t.caption:
        out += f'<p class="caption">{_e(t.caption)}</p>'
    return out


def _figure(f: Figure) -> str:
    data = base64.b64encode(f.png).decode("ascii")
    cap = f"<figcaption>{_e(f.caption)}</figcaption>" if f.caption else ""
    return (
        f'<figure id="fig-{_e(slugify(f.name))}"><img src="data:image/png;base64,{data}" '
        f'alt="{_e(f.alt)}">{cap}</figure>'
    )


def _block(block: Block) -> str:
    if isinstance(block, Paragraph):
        return f"<p>{_e(block.text)}</p>"
    if isinstance(block, Note):
        kind = "warning" if block.kind == "warning" else "info"
        label = "Warning: " if kind == "warning" else "Note: "
        return f'<div class="note {kind}"><strong>{label}</strong>{_e(block.text)}</div>'
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, KeyValues):
        items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in block.items)
        return f'<dl class="kv">{items}</dl>'
    if isinstance(block, Figure):
        return _figure(block)
    raise TypeError(f"unknown report block {type(block).__name__}")


def _section(section: Section, level: int, anchors: _Anchors, ids: dict[int, str]) -> str:
    anchor = ids[id(section)]
    tag = f"h{min(level, 6)}"
    parts = [f'<section><{tag} id="{_e(anchor)}">{_e(section.title)}</{tag}>']
    parts += [_block(b) for b in section.blocks]
    parts += [_section(s, level + 1, anchors, ids) for s in section.subsections]
    parts.append("</section>")
    return "\n".join(parts)


def _assign(sections: list[Section], anchors: _Anchors, ids: dict[int, str]) -> None:
    for s in sections:
        ids[id(s)] = anchors.make(s)
        _assign(s.subsections, anchors, ids)


def render_html(report: Report, *, footer: str | None = None) -> str:
    """The complete HTML document of ``report`` (one file, nothing external)."""
    anchors = _Anchors()
    ids: dict[int, str] = {}
    _assign(report.sections, anchors, ids)
    toc = "".join(
        f'<li><a href="#{_e(ids[id(s)])}">{_e(s.title)}</a></li>' for s in report.sections
    )
    body = "\n".join(_section(s, 2, anchors, ids) for s in report.sections)
    sub = f'<p class="subtitle">{_e(report.subtitle)}</p>' if report.subtitle else ""
    nav = f'<nav class="toc"><strong>Contents</strong><ol>{toc}</ol></nav>' if toc else ""
    foot = f"<footer>{_e(footer)}</footer>" if footer else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # no request may leave the file: forbid every fetch except inline data
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">\n"
        f"<title>{_e(report.title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{_e(report.title)}</h1>\n{sub}\n{nav}\n{body}\n{foot}\n</main>\n</body>\n</html>\n"
    )
