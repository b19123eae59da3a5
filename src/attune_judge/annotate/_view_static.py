"""``attune-judge report RUN --items``: the viewer's pages as one static, self-contained HTML
file (no server, no script, no external file), for a run to be shared.

The file holds, per judgments log: the landing facts and the largest disagreements, the
disagreements by criterion with their confusion tables, the table of judgments and one section
per judgment (the judgment page). Up to :data:`MAX_STATIC` judgments per log are written in
full (the largest disagreements and the failures first, then the run's order); above that the
file says how many are left out and ``attune-judge view`` shows them all. The table is not
filterable (no script); sorting and filtering are the server's.
"""

from __future__ import annotations

import html
from pathlib import Path

from attune_judge.annotate._view_index import Query
from attune_judge.annotate._view_pages import (
    WORST,
    disagreements_section,
    judgment_section,
    landing_section,
    page,
    table_section,
    view_css,
)
from attune_judge.annotate._view_runs import open_runs

__all__ = ["MAX_STATIC", "write_items_html"]

MAX_STATIC = 2000
"""Judgments written in full per judgments log (about 5 KB each: a 10 MB file)."""


class _StaticLinks:
    """Anchors inside the one file; only the judgments written have a target."""

    def __init__(self, written: dict[int, set[int]]) -> None:
        self.written = written

    def home(self) -> str:
        return "#top"

    def table(self, run: int, q: Query | None = None) -> str | None:
        if q is None:
            return f"#r{run}-table"
        if q.criterion and (q.jv or q.hv):
            return f"#r{run}-cell-{q.criterion}-{q.jv}-{q.hv}"
        return None

    def judgment(self, run: int, jid: int) -> str | None:
        return f"#r{run}-j{jid}" if jid in self.written.get(run, set()) else None

    def disagreements(self, run: int) -> str:
        return f"#r{run}-disagreements"


def write_items_html(
    run: Path, out: Path | None = None, *, human: Path | None = None, limit: int = MAX_STATIC
) -> Path:
    """Write the static viewer of ``run`` to ``out`` (default ``RUN/items.html``)."""
    runs = open_runs(run, human)
    out = Path(out) if out is not None else Path(run) / "items.html"
    written: dict[int, set[int]] = {}
    chosen: dict[int, list[int]] = {}
    for n, r in enumerate(runs):
        ids: list[int] = []
        for crit in [None, *r.index.joined_criteria]:
            ids += [row.id for row in r.index.worst(WORST, crit)]
        ids += [row.id for row in r.index.rows(Query(status="__failed__", per=limit))]
        ids += [row.id for row in r.index.rows(Query(per=limit))]
        unique = list(dict.fromkeys(ids))[:limit]
        chosen[n] = unique
        written[n] = set(unique)
    links = _StaticLinks(written)
    body = ['<p id="top"></p>', landing_section(runs, links, str(run))]
    for n, r in enumerate(runs):
        name = html.escape(r.name)
        if r.index.joined_criteria:
            body.append(f'<section id="r{n}-disagreements"><h1>Judge and people: {name}</h1>')
            body.append(disagreements_section(n, r, links))
            for crit in r.index.joined_criteria:
                _, _, cells = r.index.confusion(crit)
                for (jv, hv), _count in sorted(cells.items()):
                    q = Query(criterion=crit, jv=jv, hv=hv, joined=True, per=limit)
                    rows = r.index.rows(q)
                    anchor = html.escape(f"r{n}-cell-{crit}-{jv}-{hv}")
                    body.append(
                        f'<section id="{anchor}"><h3>{html.escape(crit)}: judge {html.escape(jv)}, '
                        f"people {html.escape(hv)}</h3><ul>"
                    )
                    for row in rows:
                        href = links.judgment(n, row.id)
                        label = html.escape(f"{row.item_id} ({row.model})")
                        body.append(
                            f'<li><a href="{href}">{label}</a></li>'
                            if href
                            else f"<li>{label}</li>"
                        )
                    body.append("</ul></section>")
            body.append("</section>")
        total = r.index.totals()["_all"]
        rows = r.index.rows_by_id(sorted(chosen[n]))
        body.append(f'<section id="r{n}-table"><h1>Judgments: {name}</h1>')
        if len(rows) < total:
            body.append(
                f'<p class="note">{len(rows)} of {total} judgments are in this file (the largest '
                f"disagreements and the failures first); <code>attune-judge view</code> shows "
                "them all.</p>"
            )
        body.append(table_section(n, r, Query(per=max(1, len(rows))), rows, len(rows), links))
        body.append("</section>")
        for jid in sorted(chosen[n]):
            body.append(
                f'<section class="judgment" id="r{n}-j{jid}"><h1>Judgment #{jid} '
                f'<a href="#r{n}-table">↑ table</a></h1>'
            )
            body.append(judgment_section(n, r, jid, links) or "")
            body.append("</section>")
    css = (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">\n<style>\n" + view_css() + "</style>"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page(f"attune-judge items: {run}", "\n".join(body), css=css), encoding="utf-8")
    tmp.replace(out)
    return out
