"""The run viewer's pages, as HTML strings: the served pages (``attune-judge view``) and the
static file (``attune-judge report RUN --items``) are the same functions with other links.

Every piece of text from a run (conversations, replies, rationales, model names, item ids,
failure messages, people's names and values) goes through :func:`html.escape`; no page has a
script. Links come from a :class:`Links` object: the server's URLs, or the static file's
anchors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from html import escape
from importlib import resources
from typing import Any, Protocol
from urllib.parse import urlencode

from attune_judge.annotate._view_index import Query, Row, as_dict
from attune_judge.annotate._view_runs import ViewedRun
from attune_judge.calibration import fmt_num
from attune_judge.data import JudgeItem

__all__ = [
    "Links",
    "ServerLinks",
    "disagreements_section",
    "judgment_section",
    "landing_section",
    "page",
    "table_section",
    "view_css",
]

WORST = 5
"""Disagreements listed per run on the landing page, and per criterion by default."""


class Links(Protocol):
    """Where the pages link to."""

    def home(self) -> str: ...
    def table(self, run: int, q: Query | None = None) -> str | None: ...
    def judgment(self, run: int, jid: int) -> str | None: ...
    def disagreements(self, run: int) -> str: ...


class ServerLinks:
    """The server's URLs."""

    def home(self) -> str:
        return "/"

    def table(self, run: int, q: Query | None = None) -> str | None:
        params = q.params() if q is not None else {}
        return f"/r/{run}/" + (f"?{urlencode(params)}" if params else "")

    def judgment(self, run: int, jid: int) -> str | None:
        return f"/r/{run}/j/{jid}"

    def disagreements(self, run: int) -> str:
        return f"/r/{run}/disagreements"


def view_css() -> str:
    """The viewer's stylesheet."""
    return resources.files("attune_judge.annotate").joinpath("assets/view.css").read_text("utf-8")


def _a(href: str | None, text: str, cls: str = "") -> str:
    if cls == "id" and len(text) <= 24:
        cls = "id short"  # a short id stays on one line
    c = f' class="{cls}"' if cls else ""
    if href is None:
        return f"<span{c}>{escape(text)}</span>"
    return f'<a href="{escape(href)}"{c}>{escape(text)}</a>'


def _free(text: str) -> str:
    """A name from the run (a model, a person): escaped; a long one may wrap anywhere."""
    cls = "model short" if len(text) <= 24 else "model"
    return f'<span class="{cls}">{escape(text)}</span>'


def _name(text: str) -> str:
    """A criterion's name, escaped, that may wrap after its underscores."""
    return escape(text).replace("_", "_<wbr>")


def _num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "—"
    return f"{x:g}" if float(x).is_integer() else fmt_num(x, digits)


def _cost(x: float | None) -> str:
    return "—" if x is None else f"${x:.4f}"


def page(title: str, body: str, *, css: str, nav: str = "") -> str:
    """A whole page: the CSS given (a link, or an inline ``<style>`` for the static file)."""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n{css}\n</head>\n<body>\n"
        f'<header><p class="nav">{nav}</p><h1>{escape(title)}</h1></header>\n'
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """A table of already-escaped cells."""
    c = f' class="{cls}"' if cls else ""
    out = [f"<table{c}><thead><tr>", *(f"<th>{h}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(_cell(cell) for cell in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


_NUMBER = re.compile(
    r"(<strong>)?[-+$\d.,—]+( s)?(</strong>)?( <span class=\"people\"[^<]*</span>)?"
)


def _cell(cell: str) -> str:
    """A table cell; numbers never wrap."""
    return f'<td class="num">{cell}</td>' if _NUMBER.fullmatch(cell) else f"<td>{cell}</td>"


def _worst_cell(row: Row) -> tuple[str, float | None, float | None, float | None]:
    """The criterion of the row's largest disagreement, the judge's and people's values."""
    best = max(
        (c for c in row.diffs if row.diffs[c] is not None),
        key=lambda c: (row.diffs[c], c),
        default=None,
    )
    if best is None:
        return "", None, None, None
    return best, row.scores.get(best), row.humans.get(best), row.diffs[best]


def _worst_table(n: int, rows: Sequence[Row], links: Links, criterion: str | None = None) -> str:
    body = []
    for rank, row in enumerate(rows, 1):
        crit, judge, people, diff = (
            _worst_cell(row)
            if criterion is None
            else (
                criterion,
                row.scores.get(criterion),
                row.humans.get(criterion),
                row.diffs.get(criterion),
            )
        )
        body.append(
            [
                str(rank),
                _a(links.judgment(n, row.id), row.item_id, "id"),
                _free(row.model),
                _name(crit),
                _num(judge),
                _num(people),
                f"<strong>{_num(diff)}</strong>",
            ]
        )
    head = [
        "#",
        "item (open)",
        "model",
        "criterion",
        "judge",
        "people (median)",
        "|judge − people|",
    ]
    return _table(head, body, "worst")


def landing_section(runs: Sequence[ViewedRun], links: Links, root: str) -> str:
    """The first page: each run, and where the judge and the people differ most."""
    out = [
        f'<p class="lead">Judgments under <code>{escape(root)}</code>. Open a run\'s '
        "judgments, or go straight to the items where the judge and the people differ most.</p>"
    ]
    for n, run in enumerate(runs):
        t = run.index.totals()
        failed = t["_all"] - t.get("ok", 0)
        crits = ", ".join(run.index.criteria) or "—"
        out.append(
            f'<section class="run" id="run-{n}"><h2>{escape(run.name)} '
            f'<span class="kind">{escape(run.kind)}</span></h2>'
        )
        facts = [
            f"{t['_all']} judgments ({t.get('ok', 0)} ok, {failed} failed)",
            f"{len(run.index.models)} model(s)",
            f"criteria: {escape(crits)}",
        ]
        if t["_lines"] > t["_all"]:
            facts.append(f"{t['_lines'] - t['_all']} earlier attempt(s) superseded")
        out.append("<p>" + "; ".join(facts) + ".</p>")
        if run.humans_source:
            out.append(
                f"<p>People's labels: {escape(run.humans_source)}; "
                f"{t['_joined']} judgment(s) joined.</p>"
            )
        else:
            out.append(
                "<p>No people's labels joined (add them with "
                "<code>--human LABELS.jsonl</code>).</p>"
            )
        if run.items_note:
            out.append(f'<p class="note">Conversations not shown: {escape(run.items_note)}.</p>')
        nav = [_a(links.table(n), "All judgments")]
        if failed:
            nav.append(_a(links.table(n, Query(status="__failed__")), f"Failures ({failed})"))
        if t["_joined"]:
            nav.insert(0, _a(links.disagreements(n), "Disagreements by criterion"))
        out.append('<p class="actions">' + " · ".join(nav) + "</p>")
        if t["_joined"]:
            worst = run.index.worst(WORST)
            out.append(f"<h3>The {len(worst)} largest disagreements with the people</h3>")
            out.append(
                "<p>Each item's largest |judge − people's median| over its criteria; "
                "open one to read the conversation, the judge's answer and each person's "
                "label.</p>"
            )
            out.append(_worst_table(n, worst, links))
        out.append("</section>")
    return "\n".join(out)


def _select(name: str, label: str, options: Sequence[tuple[str, str]], chosen: str) -> str:
    opts = "".join(
        f'<option value="{escape(v)}"{" selected" if v == chosen else ""}>{escape(t)}</option>'
        for v, t in options
    )
    return f'<label>{escape(label)} <select name="{name}">{opts}</select></label>'


def _filters(n: int, run: ViewedRun, q: Query, action: str) -> str:
    idx = run.index
    statuses = [("", "any"), ("__failed__", "failed (any)")] + [(s, s) for s in idx.statuses]
    parts = [
        f'<form class="filters" method="get" action="{escape(action)}">',
        _select("model", "model", [("", "any")] + [(m, m) for m in idx.models], q.model),
        _select(
            "criterion",
            "criterion",
            [("", "overall")] + [(c, c) for c in idx.criteria],
            q.criterion,
        ),
        _select("status", "status", statuses, q.status),
        _input("lo", "score from", _fmt(q.lo), 4),
        _input("hi", "to", _fmt(q.hi), 4),
        _input("q", "text", q.q, 18),
    ]
    if idx.has_humans:
        checked = " checked" if q.joined else ""
        parts.append(
            f'<label><input type="checkbox" name="joined" value="1"{checked}> '
            "with people's labels</label>"
        )
    checked = " checked" if q.all_lines else ""
    parts.append(
        f'<label><input type="checkbox" name="all" value="1"{checked}> earlier attempts</label>'
    )
    for key in ("sort", "desc", "jv", "hv"):
        value = q.params().get(key)
        if value:
            parts.append(f'<input type="hidden" name="{key}" value="{escape(value)}">')
    parts.append('<button type="submit">Filter</button> ')
    parts.append(f'<a href="{escape(action)}">clear</a></form>')
    return "".join(parts)


def _input(name: str, label: str, value: str, size: int) -> str:
    return (
        f'<label>{escape(label)} <input name="{name}" size="{size}" '
        f'value="{escape(value)}"></label>'
    )


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def table_section(
    n: int, run: ViewedRun, q: Query, rows: Sequence[Row], total: int, links: Links
) -> str:
    """The filterable, sortable table of one run's judgments, one page of it."""
    base = links.table(n) or ""
    crits = run.index.criteria
    shown = [q.criterion] if q.criterion else crits[:8]

    def head(label: str, key: str) -> str:
        if links.table(n) is None:
            return escape(label)
        desc = not q.desc if q.sort == key else key in ("diff", "latency", "cost")
        arrow = (" ▼" if q.desc else " ▲") if q.sort == key else ""
        return _a(links.table(n, _replace(q, sort=key, desc=desc, page=1)), label + arrow, "sort")

    cols = [head("#", "order"), head("model", "model"), head("item", "item")]
    for c in shown:
        cols.append(head(c, "score") if c == q.criterion else _name(c))
    if not q.criterion:
        cols.append(head("overall", "overall"))
    cols += [head("status", "status"), head("latency s", "latency"), head("cost", "cost")]
    if run.index.has_humans:
        cols.append(head("|judge − people|", "diff"))
    body = []
    for row in rows:
        cells = [
            _a(links.judgment(n, row.id), str(row.id), "id"),
            _free(row.model),
            _a(links.judgment(n, row.id), row.item_id, "id"),
        ]
        for c in shown:
            value = _num(row.scores.get(c))
            if row.humans.get(c) is not None:
                value += (
                    f' <span class="people" title="people\'s median">({_num(row.humans[c])})</span>'
                )
            cells.append(value)
        if not q.criterion:
            cells.append(_num(row.overall) if row.verdict is None else escape(row.verdict))
        status = escape(row.status) + ("" if row.current else " <em>(superseded)</em>")
        cells += [
            f'<span class="status-{escape(row.status)}">{status}</span>',
            _num(row.latency),
            _cost(row.cost),
        ]
        if run.index.has_humans:
            d = row.diffs.get(q.criterion) if q.criterion else row.maxdiff
            cells.append(_num(d))
        body.append(cells)
    static = links.table(n, _replace(q, page=q.page + 1)) is None
    pages = max(1, -(-total // q.per))
    first = (q.page - 1) * q.per + 1 if total else 0
    last = min(total, q.page * q.per)
    pager = [f'<p class="pager">{first}–{last} of {total} judgment(s)']
    if q.page > 1:
        pager.append(" · " + _a(links.table(n, _replace(q, page=q.page - 1)), "← previous"))
    if q.page < pages:
        pager.append(" · " + _a(links.table(n, _replace(q, page=q.page + 1)), "next →"))
    pager.append(f" · page {q.page} of {pages}</p>")
    note = ""
    if q.criterion and (q.jv or q.hv):
        note = (
            f'<p class="note">Confusion cell: judge {escape(q.jv or "any")}, people '
            f"{escape(q.hv or 'any')} on {escape(q.criterion)}.</p>"
        )
    more = (
        ""
        if len(shown) == len(crits)
        else f'<p class="note">{len(crits)} criteria: choose one to see its scores.</p>'
    )
    return "\n".join(
        [
            "" if static else _filters(n, run, q, base),
            note,
            f"<p>{total} judgment(s)</p>" if static else "".join(pager),
            _table(cols, body, "judgments"),
            more,
        ]
    )


def _replace(q: Query, **change: Any) -> Query:
    return Query(**{**q.__dict__, **change})


def disagreements_section(n: int, run: ViewedRun, links: Links, k: int = WORST) -> str:
    """Per criterion: the ``k`` largest disagreements, and the confusion table (judge's level ×
    people's median) whose cells open their items."""
    idx = run.index
    out = [
        f"<p>Judge against {escape(run.humans_source or 'the people')}: |judge − people's "
        "median| per criterion on the items both labelled. Levels are rounded to the "
        "scale's steps.</p>"
    ]
    for crit in idx.joined_criteria:
        out.append(f'<section class="criterion" id="c-{escape(crit)}"><h2>{escape(crit)}</h2>')
        out.append(f"<h3>The {k} largest disagreements</h3>")
        out.append(_worst_table(n, idx.worst(k, crit), links, crit))
        rows_l, cols_l, cells = idx.confusion(crit)
        out.append("<h3>Judge × people</h3>")
        head = ["judge ↓ / people →", *(escape(c) for c in cols_l)]
        body = []
        for jv in rows_l:
            line = [f"<strong>{escape(jv)}</strong>"]
            for hv in cols_l:
                count = cells.get((jv, hv), 0)
                if not count:
                    line.append('<span class="zero">·</span>')
                    continue
                href = links.table(n, Query(criterion=crit, jv=jv, hv=hv, joined=True))
                cls = "agree" if jv == hv else ""
                line.append(_a(href, str(count), cls) if href else escape(str(count)))
            body.append(line)
        out.append(_table(head, body, "confusion"))
        out.append("</section>")
    if not idx.joined_criteria:
        out.append("<p>No judgment shares an item and a criterion with the people's labels.</p>")
    return "\n".join(out)


def _text(content: str, cls: str) -> str:
    return f'<div class="{cls}">{escape(content)}</div>'


def _distribution(dist: dict[str, Any]) -> str:
    probs = dist.get("probabilities") or {}
    rows = []
    for level, p in sorted(probs.items(), key=lambda kv: float(kv[0]) if _isnum(kv[0]) else 0):
        try:
            width = max(0.0, min(100.0, float(p) * 100))
        except (TypeError, ValueError):
            continue
        bar = f'<progress value="{width / 100:.4f}" max="1"></progress>'
        rows.append([escape(str(level)), f"{bar} {fmt_num(p, 3)}"])
    extra = (
        f"expected {fmt_num(dist.get('expected'), 2)}, mode {escape(str(dist.get('mode', '—')))}"
    )
    return _table(["level", "probability"], rows, "dist") + f"<p>{extra}</p>"


def _isnum(x: Any) -> bool:
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return True


def _facts(obj: dict[str, Any], row: Row) -> str:
    usage = as_dict(obj.get("usage"))
    out = ['<dl class="facts">']
    for label, value in (
        ("item", row.item_id),
        ("model", row.model),
        ("conversation", str(obj.get("conversation_id") or "—")),
        ("judge", row.judge_id),
        ("status", row.status + ("" if row.current else " (superseded by a later attempt)")),
        ("latency", _num(row.latency) + " s"),
        ("cost", _cost(row.cost)),
        ("tokens", f"{usage.get('prompt_tokens', 0)} in, {usage.get('completion_tokens', 0)} out"),
    ):
        out.append(f"<dt>{escape(label)}</dt><dd>{escape(value)}</dd>")
    out.append("</dl>")
    return "".join(out)


def _conversation(item: JudgeItem | None, note: str, details: dict[str, Any], pair: bool) -> str:
    out = ["<h2>Conversation</h2>"]
    if item is None:
        return out[0] + f'<p class="note">Not available: {escape(note)}.</p>'
    out.append('<ol class="conversation">')
    for m in item.context:
        role = escape(m.role)
        out.append(f'<li class="{role}"><span class="role">{role}</span>{escape(m.content)}</li>')
    out.append("</ol>")
    if pair:
        a = escape(str(details.get("option_a") or "A"))
        b = escape(str(details.get("option_b") or "B"))
        other = str(item.metadata.get("other") or "")
        out.append('<div class="replies">')
        out.append(f"<div><h3>Reply A: {a}</h3>{_text(item.candidate, 'reply')}</div>")
        out.append(f"<div><h3>Reply B: {b}</h3>{_text(other, 'reply')}</div></div>")
    else:
        out.append("<h3>Candidate reply</h3>" + _text(item.candidate, "reply"))
        if item.reference is not None:
            out.append("<h3>Reference reply</h3>" + _text(item.reference, "reference"))
    return "\n".join(out)


def _failure(obj: dict[str, Any], row: Row, details: dict[str, Any]) -> str:
    reason = details.get("reason") or details.get("reasons") or ""
    out = [f'<div class="failure"><strong>Failed: {escape(row.status)}</strong>']
    if reason:
        text = reason if isinstance(reason, str) else json.dumps(reason)
        out.append(f"<p>reason: {escape(text)}</p>")
    out.append(_text(str(obj.get("error") or "no error text recorded"), "error") + "</div>")
    return "".join(out)


def _people(run: ViewedRun, obj: dict[str, Any], row: Row, pair: bool) -> str:
    """The judge's scores beside the people's median and each person's value."""
    labels = run.index.labels(row.item_id)
    people: dict[str, dict[str, str]] = {}
    for lab in labels:
        people.setdefault(lab.criterion, {})[lab.rater] = lab.shown
    raters = sorted({lab.rater for lab in labels})
    if pair:
        if not people:
            return ""
        body = [[_free(r), escape(people.get("a_win", {}).get(r, "—"))] for r in raters]
        return "<h3>People's choices</h3>" + _table(["person", "choice"], body)
    scores = as_dict(obj.get("scores"))
    crits = list(scores) + [c for c in people if c not in scores and c != "a_win"]
    if not crits:
        return ""
    head = ["criterion", "judge", "people (median)", "|judge − people|"]
    head += [_free(r) for r in raters]
    body = [
        [
            _name(c),
            f"<strong>{_num(row.scores.get(c))}</strong>",
            _num(row.humans.get(c)),
            _num(row.diffs.get(c)),
            *(escape(people.get(c, {}).get(r, "—")) for r in raters),
        ]
        for c in crits
    ]
    out = _table(head, body, "scores")
    if obj.get("overall") is not None:
        out += (
            f"<p>Overall: <strong>{_num(obj.get('overall'))}</strong> "
            f"(normalised {_num(obj.get('normalized'), 3)})</p>"
        )
    return out


def _extras(obj: dict[str, Any], details: dict[str, Any], pair: bool) -> str:
    """Rationale, reasoning, behaviour answers, score distributions, jury members, raw text."""
    out = []
    if obj.get("rationale") and not pair:
        out.append("<h3>Rationale</h3>" + _text(str(obj["rationale"]), "rationale"))
    if details.get("reasoning"):
        out.append("<h3>Reasoning</h3>" + _text(str(details["reasoning"]), "rationale"))
    answers = details.get("answers")
    if isinstance(answers, dict) and answers:
        body = [[escape(str(k)), escape(str(v))] for k, v in answers.items()]
        out.append("<h3>Behaviour answers</h3>" + _table(["item", "answer"], body))
    dists = details.get("distributions")
    if isinstance(dists, dict) and dists:
        out.append("<h3>Score distributions</h3>")
        out += [
            f"<h4>{escape(str(c))}</h4>" + _distribution(d)
            for c, d in dists.items()
            if isinstance(d, dict)
        ]
    members = details.get("members")
    if isinstance(members, list | dict) and members:
        pairs = members.items() if isinstance(members, dict) else enumerate(members)
        body = []
        for name, member in pairs:
            m = member if isinstance(member, dict) else {}
            body.append(
                [
                    escape(str(m.get("judge_id") or name)),
                    escape(str(m.get("status", "—"))),
                    escape(json.dumps(m.get("scores") or {})),
                    escape(str(m.get("error") or "")),
                ]
            )
        out.append("<h3>Jury members</h3>" + _table(["member", "status", "scores", "error"], body))
    if obj.get("raw_output"):
        raw = _text(str(obj["raw_output"]), "raw")
        out.append(f"<details><summary>Raw model output</summary>{raw}</details>")
    whole = _text(json.dumps(obj, indent=1, ensure_ascii=False), "raw")
    out.append(f"<details><summary>The whole record (JSON)</summary>{whole}</details>")
    return "\n".join(out)


def judgment_section(n: int, run: ViewedRun, jid: int, links: Links) -> str | None:
    """One judgment: the conversation, the replies, the judge's answer and rationale, its
    score distributions, the failure, the people's labels; both orders of a pair."""
    found = run.index.record(jid)
    if found is None:
        return None
    obj, row = found
    details = as_dict(obj.get("details"))
    found_item = run.index.item(row.item_id)
    note = run.items_note or "the item is not among the run's items"
    item = found_item if isinstance(found_item, JudgeItem) else None
    if isinstance(found_item, str):
        note = found_item
    out = [_facts(obj, row)]
    tries = run.index.attempts(row.item_id, row.judge_id)
    if len(tries) > 1:
        shown = [
            _a(links.judgment(n, i), f"#{i} {s}")
            if i != jid
            else f"<strong>#{i} {escape(s)}</strong>"
            for i, s in tries
        ]
        out.append("<p>Attempts: " + ", ".join(shown) + "</p>")
    pair = (
        isinstance(details.get("order_ab"), str)
        or "raw_ab" in details
        or (item is not None and isinstance(item.metadata.get("other"), str))
    )
    out.append('<div class="two"><div>')
    out.append(_conversation(item, note, details, pair))
    out.append("</div><div><h2>The judge</h2>")
    if row.status != "ok":
        out.append(_failure(obj, row, details))
    if pair:
        out.append(_pair(obj, details))
    out.append(_people(run, obj, row, pair))
    out.append(_extras(obj, details, pair))
    out.append("</div></div>")
    return "\n".join(out)


def _pair(obj: dict[str, Any], details: dict[str, Any]) -> str:
    """Both orders of a pairwise judgment, side by side."""
    a = escape(str(details.get("option_a") or "A"))
    b = escape(str(details.get("option_b") or "B"))
    verdict = escape(str(obj.get("verdict") or "—"))
    out = [
        f"<p>Verdict after both orders: <strong>{verdict}</strong> (A = {a}, B = {b})</p>",
        '<div class="replies">',
    ]
    said_ab = escape(str(details.get("order_ab") or "—"))
    out.append(
        f"<div><h3>Order A, B</h3><p>said: <strong>{said_ab}</strong></p>"
        + _text(str(obj.get("rationale") or ""), "rationale")
        + "</div>"
    )
    mapped = details.get("order_ba_mapped")
    said = escape(str(details.get("order_ba") or "—"))
    back = f" (= {escape(str(mapped))} in order A, B)" if mapped else ""
    out.append(
        f"<div><h3>Order B, A</h3><p>said: <strong>{said}</strong>{back}</p>"
        + _text(str(details.get("rationale_ba") or ""), "rationale")
        + "</div>"
    )
    out.append("</div>")
    return "".join(out)
